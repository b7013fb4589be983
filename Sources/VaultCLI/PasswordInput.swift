import Foundation
import VaultCore
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Where passwords come from: `--password-file F` (first line), `VAULT_PASSWORD_COMMAND` (its
/// standard output, first line), or the terminal without echo. Passwords live only in SecureBytes.
enum PasswordInput {
    static func source(file: String?, environment: [String: String]) -> PasswordSource {
        if let file {
            return PasswordSource(isExplicit: true) { _ in try fromFile(file) }
        }
        if let cmd = environment["VAULT_PASSWORD_COMMAND"], !cmd.isEmpty {
            return PasswordSource(isExplicit: true) { _ in try fromCommand(cmd) }
        }
        return PasswordSource(isExplicit: false) { prompt in try fromTerminal(prompt) }
    }

    /// The first line of `bytes`, without its line ending, moved into SecureBytes; `bytes` is zeroed.
    static func firstLine(_ bytes: inout [UInt8]) -> SecureBytes {
        defer { for i in bytes.indices { bytes[i] = 0 } }
        var end = bytes.firstIndex(of: 10) ?? bytes.count
        if end > 0 && bytes[end - 1] == 13 { end -= 1 }
        return bytes.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
    }

    static func checkNonEmpty(_ s: SecureBytes, _ from: String) throws -> SecureBytes {
        if s.count == 0 { throw VaultError(.usage, "the password from \(from) is empty") }
        return s
    }

    static func fromFile(_ path: String) throws -> SecureBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw VaultError(.usage, "cannot read the password file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &bytes, bytes.count)
        guard n >= 0 else { throw VaultError(.io, "cannot read the password file \(path)") }
        var used = Array(bytes[0..<n])
        for i in bytes.indices { bytes[i] = 0 }
        return try checkNonEmpty(firstLine(&used), "--password-file")
    }

    static func fromCommand(_ cmd: String) throws -> SecureBytes {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", cmd]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { throw VaultError(.usage, "VAULT_PASSWORD_COMMAND could not start: \(error)") }
        var data = [UInt8](pipe.fileHandleForReading.readDataToEndOfFile())
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            for i in data.indices { data[i] = 0 }
            throw VaultError(.usage, "VAULT_PASSWORD_COMMAND failed (exit \(p.terminationStatus))")
        }
        return try checkNonEmpty(firstLine(&data), "VAULT_PASSWORD_COMMAND")
    }

    /// Reads a line from /dev/tty with echo off.
    static func fromTerminal(_ prompt: String) throws -> SecureBytes {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            throw VaultError(.usage, "a password is needed and there is no terminal to ask on",
                             hint: "pass --password-file FILE or set VAULT_PASSWORD_COMMAND")
        }
        defer { close(fd) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var old = termios()
        tcgetattr(fd, &old)
        var quiet = old
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &quiet)
        defer { tcsetattr(fd, TCSAFLUSH, &old); _ = write(fd, "\n", 1) }
        var buf = [UInt8](repeating: 0, count: 1024)
        var n = 0
        while n < buf.count {
            var c: UInt8 = 0
            let r = read(fd, &c, 1)
            if r <= 0 || c == 10 || c == 13 { break }
            buf[n] = c; n += 1
        }
        var used = Array(buf[0..<n])
        for i in buf.indices { buf[i] = 0 }
        return try checkNonEmpty(firstLine(&used), "the terminal")
    }
}
