import Foundation
import VaultArguments
import VaultCore
import VaultSync

/// `vault transfers`: uploads and downloads, and what to do with them.
struct TransfersCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "transfers", abstract: "list uploads and downloads with their state; resume, pause or cancel them",
                             discussion: "Listing, pause and cancel run beside a running `vault sync`; resume is a sync itself.",
                             subcommands: [List.self, Resume.self, Pause.self, Cancel.self], defaultSubcommand: List.self)
    }

    /// `--metered` and `--large-threshold`: the vault's network-cost settings.
    struct CostOptions: ParsableArguments {
        @Option(help: "treat the network as metered (yes), unmetered (no), or ask NetworkManager (auto); saved in the vault")
        var metered: MeteredSetting?
        @Option(help: "on a metered network, transfers from this size wait (saved in the vault)", valueName: "size")
        var largeThreshold: ByteSize?

        func apply(to vault: Vault) throws {
            if let metered { try NetworkCost.setMetered(metered.rawValue, vault: vault) }
            if let largeThreshold { try NetworkCost.setLargeTransferBytes(largeThreshold.bytes, vault: vault) }
        }
    }

    /// `vault transfers [list]`.
    struct List: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "list", abstract: "each upload and download of a file still here: state, bytes, retry time or failure reason")
        }

        @OptionGroup var cost: CostOptions
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        func run(_ ctx: CommandContext) throws {
            let vault = try ctx.openVault(lock: .control)
            try cost.apply(to: vault)
            let list = try TransferInfo.all(in: vault, besideSync: vault.isBesideSync)
            if ctx.out.json { try ctx.out.emit(list); return }
            if list.isEmpty { ctx.out.line("No transfers."); return }
            for t in list { ctx.out.line(t.summary) }
        }
    }

    /// `vault transfers resume [PATH]`.
    struct Resume: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "resume", abstract: "continue interrupted, waiting, paused or cancelled uploads (of PATH, or all), then sync")
        }

        @Argument(help: "the vault file or folder whose uploads to resume (all when left out)", valueName: "path")
        var path: String?
        @OptionGroup var push: PushOptions
        @OptionGroup var cost: CostOptions
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        func run(_ ctx: CommandContext) throws {
            let vault = try ctx.openVault(lock: .sync)
            try cost.apply(to: vault)
            let target = try path.map { try vault.resolve($0) }
            try SyncClient.release(vault: vault, nodeId: target?.id)
            try SyncCommand.pass(ctx, vault, SyncRequest(allowMetered: push.allowMetered, concurrency: push.concurrency),
                                 kind: .pushAndPinned, asSync: false)
        }
    }

    /// `vault transfers pause PATH`.
    struct Pause: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "pause", abstract: "hold a pending upload until `vault transfers resume`")
        }

        @Argument(help: "the vault file or folder", valueName: "path")
        var path: String
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        func run(_ ctx: CommandContext) throws { try TransfersCommand.hold(ctx, path: path, cancel: false) }
    }

    /// `vault transfers cancel PATH`.
    struct Cancel: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "cancel", abstract: "hold a pending upload and free the server's partial copy (the file stays in the vault)")
        }

        @Argument(help: "the vault file or folder", valueName: "path")
        var path: String
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        func run(_ ctx: CommandContext) throws { try TransfersCommand.hold(ctx, path: path, cancel: true) }
    }

    struct HoldResult: Encodable {
        var ok = true
        var message: String
        var path: String
        /// How many pending uploads were held.
        var held: Int
    }

    static func hold(_ ctx: CommandContext, path: String, cancel: Bool) throws {
        let vault = try ctx.openVault(lock: .control)
        let target = try vault.resolve(path)
        let what = cancel ? "cancel" : "pause", p = try vault.path(of: target)
        let n: Int
        var note = ""
        if vault.isBesideSync {
            // A sync runs: mark it, and let that sync stop the upload and settle the server side.
            n = try SyncClient.requestHold(vault: vault, nodeId: target.id, cancel: cancel)
            if n > 0 && !SyncClient.waitUntilStopped(vault: vault, nodeId: target.id) {
                note = " The running `vault sync` has not stopped it yet; it will at its next progress write."
            }
        } else {
            n = try ctx.syncClient(vault).hold(nodeId: target.id, cancel: cancel)
        }
        guard n > 0 else { throw VaultError(.notFound, "\(p) has no pending upload to \(what)") }
        let msg = (cancel ? "Cancelled the upload of \(p) (the server's partial copy is freed; the file stays in the vault)." : "Paused the upload of \(p).") + note
        if ctx.out.json { try ctx.out.emit(HoldResult(message: msg, path: p, held: n)) } else { ctx.out.line(msg + " `vault transfers resume \(p)` sends it again.") }
    }

    /// Downloads `node`'s content first when it is on the server but not here (for `cat`/`get`;
    /// never on a read-only vault, where `openContent` then says why it cannot).
    static func downloadIfNeeded(_ ctx: CommandContext, _ vault: Vault, _ node: Node) throws -> Node {
        guard node.type == .file, node.contentState == .notDownloaded, node.remoteId != nil, !vault.isReadOnly,
              try SyncAccount.load(from: vault) != nil else { return node }
        let bar = ProgressLine(enabled: true)
        let client = try ctx.syncClient(vault, say: { bar.clear(); ctx.out.note($0) })
        client.onProgress = bar.update
        defer { bar.clear() }
        return try client.ensureLocal(node)
    }
}
