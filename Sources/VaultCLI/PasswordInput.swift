import Foundation
import VaultCore
import VaultCrypto
import VaultPrimitives
internal import CLinuxShims
#if canImport(Glibc)
import Glibc
#endif

/// Where passwords come from: `--password-file F` (first line), `VAULT_PASSWORD_COMMAND` (its
/// standard output, first line), or the terminal without echo. Passwords live only in SecureBytes.
///
/// Every source is read up to its first line ending (`\n`, or `\r\n`) in a loop over short reads
/// and EINTR, and no further; a line longer than `maxLineBytes` is refused, never cut. A password
/// file may be a regular file or a pipe (`--password-file <(pass show vault)`), opened without
/// blocking (a FIFO nobody writes to reads as empty). The command runs in its own process group,
/// which is ended once its first line has arrived. Every buffer that held password bytes is zeroed.
enum PasswordInput {
    /// The longest password line accepted, in bytes, without its line ending (64 KiB). Far above
    /// any typed password, low enough that an endless source (`yes`) costs nothing.
    static let maxLineBytes = 64 * 1024

    static func source(file: String?, environment: [String: String]) -> PasswordSource {
        if let file {
            return PasswordSource(isExplicit: true) { _ in try fromFile(file) }
        }
        if let cmd = environment["VAULT_PASSWORD_COMMAND"], !cmd.isEmpty {
            return PasswordSource(isExplicit: true) { _ in try fromCommand(cmd) }
        }
        return PasswordSource(isExplicit: false) { prompt in try fromTerminal(prompt) }
    }

    static func checkNonEmpty(_ s: SecureBytes, _ from: String) throws -> SecureBytes {
        if s.count == 0 { throw VaultError(.usage, "the password from \(from) is empty") }
        return s
    }

    static func tooLong(_ from: String) -> VaultError {
        VaultError(.usage, "the password from \(from) is longer than \(maxLineBytes) bytes (without its line ending); nothing was changed",
                   hint: "a password is the first line of its source; give a shorter one")
    }

    /// The first line of `fd`: read until a line ending, the end of input, or more than
    /// `maxLineBytes` (refused). Returns the line and whether a line ending was seen.
    static func readFirstLine(fd: Int32, from what: String) throws -> (line: SecureBytes, ended: Bool) {
        let capacity = maxLineBytes + 2   // the longest line and its "\r\n"
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { memset(buf.baseAddress!, 0, capacity); buf.deallocate() }
        var n = 0
        var end: Int?
        while end == nil && n < capacity {
            let r: Int
            do { r = try POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buf[n..<min(n + 4096, capacity)])) } catch {
                throw VaultError(.io, "cannot read the password from \(what): \(error)")
            }
            if r == 0 { break }
            end = buf[n..<(n + r)].firstIndex(of: 10)
            n += r
        }
        var length = end ?? n
        if length > 0 && buf[length - 1] == 13 { length -= 1 }
        guard length <= maxLineBytes, end != nil || n < capacity else { throw tooLong(what) }
        return (SecureBytes(copying: UnsafeRawBufferPointer(rebasing: buf[0..<length])), end != nil)
    }

    /// The first line of the file `option` names (a regular file or a pipe), not empty.
    static func fromFile(_ path: String, option: String = "--password-file") throws -> SecureBytes {
        let file = try SourceFile(path, accepting: [.regular, .pipe], what: "the \(option.dropFirst(2).replacingOccurrences(of: "-", with: " "))")
        return try checkNonEmpty(try readFirstLine(fd: file.fd, from: option).line,
                                 file.isRegular ? option : "\(option) (a pipe that nothing was written to)")
    }

    /// Whether a terminal can be asked (`/dev/tty` opens).
    static var terminalAvailable: Bool {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    static func fromCommand(_ cmd: String) throws -> SecureBytes {
        let args = ["/bin/sh", "-c", cmd]
        let argv = args.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        var fd: Int32 = -1
        let rc = CLinuxShims_spawn_reader("/bin/sh", argv, &pid, &fd)
        guard rc == 0 else { throw VaultError(.usage, "VAULT_PASSWORD_COMMAND could not start: \(String(cString: strerror(rc)))") }
        let read: (line: SecureBytes, ended: Bool)
        do {
            read = try readFirstLine(fd: fd, from: "VAULT_PASSWORD_COMMAND")
        } catch {
            close(fd)
            _ = endCommand(pid)
            throw error
        }
        close(fd)   // a command that goes on writing gets EPIPE (or SIGPIPE) from here on
        let status = endCommand(pid)
        // A complete line counts even when the command was ended afterwards (by a signal, or a
        // shell reporting its child's: 128 + SIGPIPE, SIGTERM or SIGKILL); a failure of its own
        // says the line is not a password.
        let exited = status & 0x7f == 0, code = (status >> 8) & 0xff
        let ended = !exited || [SIGPIPE, SIGTERM, SIGKILL].contains(code - 128)
        if exited ? (code != 0 && !(ended && read.ended)) : !read.ended {
            throw VaultError(.usage, "VAULT_PASSWORD_COMMAND failed (\(exited ? "exit \(code)" : "signal \(status & 0x7f)"))")
        }
        return try checkNonEmpty(read.line, "VAULT_PASSWORD_COMMAND")
    }

    /// Waits up to a second for the command to exit, then ends its process group (SIGTERM, a
    /// second later SIGKILL); returns its wait status.
    static func endCommand(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        func reaped(within tenths: Int) -> Bool {
            for _ in 0..<(tenths * 10) {
                let r = waitpid(pid, &status, WNOHANG)
                if r == pid || (r < 0 && errno != EINTR) { return true }
                usleep(10_000)
            }
            return false
        }
        if !reaped(within: 10) {
            kill(-pid, SIGTERM)
            if !reaped(within: 10) {
                kill(-pid, SIGKILL)
                status = POSIXIO.waitForExit(pid) ?? status
            }
        }
        kill(-pid, SIGKILL)   // anything the command left behind in its group
        return status
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
        // TCSAFLUSH also discards what was typed and not read (the rest of a too-long line).
        defer { tcsetattr(fd, TCSAFLUSH, &old); _ = write(fd, "\n", 1) }
        var buf = [UInt8](repeating: 0, count: maxLineBytes + 1)
        defer { buf.wipe() }
        var n = 0
        while true {
            var c: UInt8 = 0
            let r = (try? withUnsafeMutableBytes(of: &c) { (b) throws(Errno) in try POSIXIO.read(fd, into: b) }) ?? -1
            if r <= 0 || c == 10 || c == 13 { break }
            guard n < maxLineBytes else { throw tooLong("the terminal") }
            buf[n] = c; n += 1
        }
        return try checkNonEmpty(buf.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }, "the terminal")
    }
}
