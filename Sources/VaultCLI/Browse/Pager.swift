import Foundation
import VaultCore
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Shows a file's plaintext in the user's pager (`$PAGER`, default `less`), streamed from the
/// sealed content into the pager's standard input through a pipe: the plaintext never touches
/// the disk. Where the policy forbids exporting plaintext, the pager is `less` in its secure
/// mode (`LESSSECURE=1`: no saving to a file, no shell, no editor), whatever `$PAGER` says.
struct Pager {
    /// The shell command run with `/bin/sh -c`.
    let command: String
    /// The pager's environment, `NAME=value`.
    let environment: [String]

    init(environment env: [String: String], exportAllowed: Bool) {
        var env = env
        if exportAllowed {
            let p = env["PAGER"]?.trimmingCharacters(in: .whitespaces) ?? ""
            command = p.isEmpty ? "less" : p
        } else {
            command = "less"
            env["LESSSECURE"] = "1"
        }
        environment = env.map { "\($0.key)=\($0.value)" }.sorted()
    }

    /// Runs the pager and writes everything `feed` produces into it; returns its exit status.
    /// The pager quitting early (before the end of the file) is normal, not an error.
    func run(_ feed: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> Int32 {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw VaultError(.io, "cannot create a pipe for the pager: \(String(cString: strerror(errno)))") }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        // Neither end leaks into the pager beyond its standard input (nor into any other child).
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        let pid: pid_t
        do { pid = try spawn(stdin: readEnd) } catch { close(readEnd); close(writeEnd); throw error }
        close(readEnd)
        struct PagerGone: Error {}
        var failure: Error?
        do {
            try feed { buf in
                do throws(Errno) { try POSIXIO.writeAll(writeEnd, buf) } catch {
                    if error == .brokenPipe { throw PagerGone() }   // the reader quit before the end
                    throw VaultError(.io, "cannot write to the pager: \(error)")
                }
            }
        } catch is PagerGone {
        } catch { failure = error }
        close(writeEnd)   // end of file for the pager
        let status = POSIXIO.waitForExit(pid) ?? 0
        if let failure { throw failure }
        // WIFEXITED / WEXITSTATUS are macros: the status layout of Linux.
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Starts `/bin/sh -c command` with `stdin` as its standard input and default signal actions
    /// (this process ignores SIGPIPE, and SIGINT while the pager runs).
    private func spawn(stdin: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        var attr = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attr)
        defer { posix_spawn_file_actions_destroy(&actions); posix_spawnattr_destroy(&attr) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        var defaults = sigset_t(), empty = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGHUP, SIGTSTP, SIGWINCH] { sigaddset(&defaults, s) }
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let args: [String] = ["sh", "-c", command]
        let argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, envp)
        guard rc == 0 else { throw VaultError(.io, "cannot start the pager (\(command)): \(String(cString: strerror(rc)))") }
        return pid
    }
}
