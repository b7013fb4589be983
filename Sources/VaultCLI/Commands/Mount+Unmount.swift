import Foundation
import VaultArguments
import VaultCore
import VaultMount
#if canImport(Glibc)
import Glibc
#endif

/// `vault mount`: the vault as a folder every program can open (docs/mount.md).
struct MountCommand: VaultCommand, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "mount", abstract: "mount the vault as a folder (FUSE) that every program can open",
                             discussion: """
            Reads come from the sealed blobs, each segment only once it authenticates (a damaged one reads as an I/O error); \
            writes are staged sealed on the vault's disk (never plaintext) and stored as a new sealed version when the file \
            is closed or fsynced; an fsync or close that succeeds means every byte is in the vault. Content that \
            is not on this device is fetched by segment ranges as it is read (sealed, each segment authenticated); offline it \
            reads as an I/O error. While the vault is locked every operation is refused \
            (permission denied) and the kernel's cache of the mount is dropped; `vault unlock` resumes it. Without \
            --foreground the command returns once the folder is mounted. A mount left by a killed process is cleaned up \
            first. The policy can forbid mounting (mountAllowed), and a policy without plaintext export refuses it.
            """)
    }

    @Flag(help: "serve the vault read-only")
    var readOnly = false
    @Flag(help: "stay in the foreground until unmounted (Ctrl-C unmounts)")
    var foreground = false
    @Argument(help: "the empty local folder to mount the vault at", valueName: "mountpoint", completion: .file)
    var mountpoint: String
    @OptionGroup var password: PasswordOptions

    /// Set in the detached child: it says "ready" on standard output once mounted.
    static let notifyVariable = "VAULT_MOUNT_NOTIFY"

    func run(_ ctx: CommandContext) throws {
        if ctx.policy.mountAllowed.value == false {
            throw VaultError(.policy, "the policy forbids mounting the vault (mountAllowed: false)", hint: "use `vault cat` or `vault browse`")
        }
        if ctx.policy.plaintextExport.value == false {
            throw VaultError(.policy, "the policy forbids plaintext export, which a mounted folder is (every program could copy files out)",
                             hint: "use `vault cat` on a terminal or `vault browse`")
        }
        let path = URL(fileURLWithPath: mountpoint).standardizedFileURL.path
        if Mountpoint.isStale(path) {
            try Mountpoint.unmount(path, lazy: true)
            ctx.out.note("vault: cleaned up the stale mount at \(path) (its process had ended)")
        } else if Mountpoint.isMounted(path) {
            throw VaultError(.alreadyExists, "\(path) is already a mountpoint", hint: "`vault unmount \(path)` first")
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue else {
            throw VaultError(.notFound, "\(path) is not a folder", hint: "create it first: mkdir \(path)")
        }
        if !foreground && ctx.environment[Self.notifyVariable] == nil { return try detach(ctx, path) }
        let notify = ctx.environment[Self.notifyVariable] == "1"
        let logFile = ctx.layout.root + "/mount.log"
        let log: (String) -> Void = { line in
            let stamp = ISO8601DateFormatter().string(from: Date())
            StandardStream.error.write("vault mount: \(stamp) \(line)\n")
        }
        let sessions = VaultSessions(layout: ctx.layout, environment: ctx.environment, policy: ctx.policy,
                                     agent: { [agents = ctx.agents] in agents.client(for: $0) }, warn: { log("warning: \($0)") })
        let held = try MountLock(vaultRoot: ctx.layout.root, mountpoint: path)
        defer { withExtendedLifetime(held) {} }
        let server = MountServer(reopener: VaultReopener(sessions: sessions, password: ctx.password), mountpoint: path,
                                 readOnly: readOnly, policy: ctx.policy, log: log)
        try server.checkVault()
        try server.run {
            if notify {
                // Detached: the parent learns the mount is ready, then this process leaves its
                // terminal and session; its log goes to mount.log (0600) in the vault's folder.
                _ = "ready\n".withCString { write(1, $0, strlen($0)) }
                let null = open("/dev/null", O_RDWR)
                let logFd = open(logFile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
                dup2(null, 0); dup2(null, 1); dup2(logFd >= 0 ? logFd : null, 2)
                if null > 2 { close(null) }
                if logFd > 2 { close(logFd) }
                setsid()
                _ = chdir("/")
            } else {
                ctx.out.note("Mounted the vault at \(path)\(readOnly ? " (read-only)" : ""); Ctrl-C or `vault unmount \(path)` unmounts it")
            }
        }
    }

    /// Starts this command again in the background (`--foreground` in a child told to say when
    /// it is ready) and returns once the mount serves; the child's errors reach this terminal.
    func detach(_ ctx: CommandContext, _ path: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        p.arguments = ["mount", path] + (readOnly ? ["--read-only"] : []) + (ctx.passwordFile.map { ["--password-file", $0] } ?? [])
        p.environment = ctx.environment.merging([Self.notifyVariable: "1"]) { $1 }
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let said = String(decoding: out.fileHandleForReading.readData(ofLength: 6), as: UTF8.self)
        guard said == "ready\n" else {
            p.waitUntilExit()   // it said why on standard error
            throw ReportedFailure(exitCode: p.terminationStatus == 0 ? 1 : p.terminationStatus)
        }
        ctx.out.line("Mounted the vault at \(path)\(readOnly ? " (read-only)" : ""); `vault unmount \(path)` unmounts it")
    }
}

/// `vault unmount`: unmount a folder `vault mount` made.
struct UnmountCommand: VaultCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "unmount", abstract: "unmount the vault's folder (what `vault mount` made)",
                             discussion: "Changes are stored when each file is closed; the mount's process ends once the folder is unmounted. A mount whose process was killed is detached.")
    }

    @Argument(help: "the mountpoint", valueName: "mountpoint", completion: .file)
    var mountpoint: String

    func run(_ ctx: CommandContext) throws {
        let path = URL(fileURLWithPath: mountpoint).standardizedFileURL.path
        let stale = Mountpoint.isStale(path)
        guard stale || Mountpoint.isMounted(path) else {
            throw VaultError(.notFound, "\(path) is not mounted", hint: "see `mount -t fuse.vault`")
        }
        try Mountpoint.unmount(path, lazy: stale)
        ctx.out.line("Unmounted \(path)")
    }
}
