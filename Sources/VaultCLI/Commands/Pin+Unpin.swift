import Foundation
import VaultArguments
import VaultCore
import VaultSync

/// `vault pin`: keep a file or folder available offline.
struct PinCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "pin", abstract: "keep a file or folder available offline (never evicted); missing content downloads in the background (--wait: now)",
                             discussion: "A background download needs the vault unlocked in the keyring (or a password file) and VAULT_BACKGROUND_DOWNLOADS not 0; `vault transfers` shows its progress.")
    }

    @Flag(help: "download missing content now, before returning")
    var wait = false
    @Argument(help: "the vault file or folder", valueName: "path")
    var path: String
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func run(_ ctx: CommandContext) throws { try Self.run(ctx, path: path, pinned: true, wait: wait) }

    struct Result: Encodable {
        var ok = true
        var message: String
        var path: String
        var pinned: Bool
        /// How many nodes changed (the folder and everything in it).
        var items: Int
    }

    static func run(_ ctx: CommandContext, path: String, pinned: Bool, wait: Bool) throws {
        var msg: String
        var missing: (count: Int, bytes: UInt64) = (0, 0)
        var connected = false
        var items = 0
        var refused: VaultError?   // the server may not be used now (policy, transport rules)
        do {
            let vault = try ctx.openVault()
            let nodes = try vault.setPinned(path, pinned)
            items = nodes.count
            msg = pinned ? "Pinned \(path) (\(nodes.count) item(s)): kept offline, never evicted." : "Unpinned \(path) (\(nodes.count) item(s)): its content may be evicted."
            connected = try SyncAccount.load(from: vault) != nil
            do { try SyncClient.checkServer(vault: vault, policy: ctx.policy) } catch let e as VaultError { refused = e }
            if pinned {   // content on the server but not on this device
                let absent = nodes.filter { !$0.isFolder && $0.contentState == .notDownloaded && $0.remoteId != nil }
                missing = (absent.count, absent.reduce(0) { $0 + $1.size })
            }
            if pinned && missing.count > 0 && connected && wait {
                let bar = ProgressLine(enabled: !ctx.out.json)
                let client = try ctx.syncClient(vault, say: { bar.clear(); if !ctx.out.json { ctx.out.note($0) } })
                client.onProgress = bar.update
                let done = try client.downloadPinned().downloaded
                bar.clear()
                msg += " Downloaded \(done) file(s)."
                missing = (0, 0)
            }
        }   // the vault (and its lock) is released here, before any background download starts
        if missing.count > 0 {
            let what = "\(missing.count) file(s), \(ByteCount.format(missing.bytes))"
            if !connected {
                msg += " Its content (\(what)) will download once the vault is connected to a server (`vault login`, then `vault sync`)."
            } else if let refused {
                msg += " Its content (\(what)) was not downloaded:"
                if ctx.out.json { try ctx.out.emit(Result(ok: false, message: msg + " " + refused.message, path: path, pinned: pinned, items: items)) } else { ctx.out.line(msg) }
                throw ctx.out.json ? ReportedFailure(exitCode: refused.exitCode) : refused
            } else if let agent = ctx.agent(), (try? agent.notifyWork()) != nil {
                msg += " The vault agent downloads \(what) in the background; `vault transfers` shows the progress."
            } else if BackgroundDownload.canStart(ctx) {
                let pid = try BackgroundDownload.start(ctx)
                msg += " Downloading \(what) in the background (pid \(pid)); `vault transfers` shows the progress."
            } else {
                msg += " Its content (\(what)) downloads with `vault sync` or `vault pin --wait` (a background download needs the vault unlocked in the keyring, or a password file, and VAULT_BACKGROUND_DOWNLOADS not 0)."
            }
        }
        if ctx.out.json { try ctx.out.emit(Result(message: msg, path: path, pinned: pinned, items: items)) } else { ctx.out.line(msg) }
    }
}

/// `vault unpin`: let content be evicted again.
struct UnpinCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "unpin", abstract: "let a file or folder's content be evicted again")
    }

    @Argument(help: "the vault file or folder", valueName: "path")
    var path: String
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func run(_ ctx: CommandContext) throws { try PinCommand.run(ctx, path: path, pinned: false, wait: false) }
}
