import Foundation
import VaultCore
internal import CLinuxShims
#if canImport(Glibc)
import Glibc
#endif

/// Starts `vault sync --pinned-only` as a detached background process (its own session, no
/// terminal, output discarded), so `vault pin` returns at once while the content downloads.
/// Its progress and any failure are recorded in the transfers table (`vault transfers`).
enum BackgroundDownload {
    /// Whether a process started now could open the vault without asking anyone: the master
    /// key is held in the keyring session, or the password comes from a file or a command.
    /// `VAULT_BACKGROUND_DOWNLOADS=0` turns background downloads off (scripts that sync themselves).
    static func canStart(_ ctx: CommandContext) -> Bool {
        if ctx.environment["VAULT_BACKGROUND_DOWNLOADS"] == "0" { return false }
        if ctx.password.isExplicit { return true }
        return ((try? ctx.sessions.currentSession())?.0) != nil
    }

    /// Spawns the background download; returns its pid. Call after the vault was closed (the
    /// child waits for the vault lock like any other command).
    static func start(_ ctx: CommandContext) throws -> pid_t {
        let path = try AgentCommand.executablePath()
        var args = [path, "sync", "--pinned-only"]
        if let f = ctx.passwordFile {
            args += ["--password-file", f.hasPrefix("/") ? f : FileManager.default.currentDirectoryPath + "/" + f]
        }
        let env = ctx.environment.map { "\($0.key)=\($0.value)" }

        let argv = args.map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = CLinuxShims_spawn_detached(path, argv, envp, &pid)
        guard rc == 0 else {
            throw VaultError(.io, "cannot start the background download: \(String(cString: strerror(rc)))",
                             hint: "run `vault sync` to download pinned content now")
        }
        return pid
    }
}
