import Foundation
import VaultCore
import VaultCrypto
import VaultSync
import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

extension VaultCommandLine {
    static let syncCommands: [Command] = [
        Command(name: "login", usage: "vault login --server URL --user NAME [--server-password-file F] [--ca-file F] [--insecure-http]",
                summary: "connect the vault to a server over https:// (http:// only on this machine; the token and server password stay in the encrypted database)",
                valued: ["server", "user", "server-password-file", "ca-file"], flags: ["insecure-http"], run: runLogin),
        syncCommand,
        Command(name: "transfers", usage: "vault transfers [resume [PATH] [--concurrency N] [--allow-metered] | pause PATH | cancel PATH] [--metered yes|no|auto] [--large-threshold SIZE] [--json]",
                summary: "list uploads and downloads with their state; `resume` continues waiting ones",
                valued: ["concurrency", "metered", "large-threshold"], flags: ["allow-metered"], run: runTransfers),
    ]

    static func runLogin(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        guard let server = a.values["server"], let user = a.values["user"], !user.isEmpty else {
            throw VaultError(.usage, "vault login needs --server URL and --user NAME")
        }
        _ = try ServerAddress(server)   // a malformed address is refused before anything is asked
        if let ca = a.values["ca-file"] { _ = try SourceFile(ca, accepting: .regular, what: "the CA file") }   // libcurl would block on a FIFO
        let password: SecureBytes   // read before the vault is locked: a slow source never holds it
        if let f = a.values["server-password-file"] {
            password = try PasswordInput.fromFile(f)
        } else {
            password = try PasswordInput.fromTerminal("Server password for \(user): ")
        }
        let vault = try ctx.openVault()
        let client = try SyncClient.login(vault: vault, serverURL: server, user: user, password: password,
                                          caFile: a.values["ca-file"], insecureHTTP: a.flag("insecure-http"),
                                          policy: ctx.policy, warn: { ctx.out.warn($0) })
        ctx.queuedChanges(vault)   // the agent, if one runs, opens the push channel and syncs
        let msg = "Logged in to \(client.serverURL) as \(user)."
        if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
    }

    static func concurrencyOption(_ a: Arguments) throws -> Int {
        guard let c = a.values["concurrency"] else { return SyncClient.defaultConcurrency }
        guard let n = Int(c), (1...16).contains(n) else { throw VaultError(.usage, "--concurrency takes a number from 1 to 16") }
        return n
    }

    static func push(_ ctx: CommandContext, _ vault: Vault, _ a: Arguments) throws {
        let concurrency = try concurrencyOption(a)
        let bar = ProgressLine(enabled: !ctx.out.json)
        let client = try ctx.syncClient(vault, say: { bar.clear(); if !ctx.out.json { ctx.out.note($0) } })
        client.onProgress = bar.update
        // Large uploads wait on a metered network unless allowed (never when the policy forbids it).
        let unmeteredOnly = ctx.policy.largeTransfersUnmeteredOnly.value == true
        let (hold, cost) = try NetworkCost.largeTransferHold(vault: vault, policy: ctx.policy, allowMetered: a.flag("allow-metered"),
                                                             environment: ctx.environment)
        let pinnedOnly = a.flag("pinned-only")   // what `vault pin` starts in the background
        var s = pinnedOnly ? PushSummary() : try client.push(concurrency: concurrency, holdLargeFrom: hold)
        let pinned = try client.downloadPinned(holdLargeFrom: hold)
        s.downloaded = pinned.downloaded
        s.waitingForUnmetered += pinned.waiting
        bar.clear()
        try report(ctx, s, pinnedOnly: pinnedOnly, meteredSource: cost.source, unmeteredOnly: unmeteredOnly)
    }

    /// What a sync did, for people or as JSON (whether this command or the agent ran it).
    static func report(_ ctx: CommandContext, _ s: PushSummary, pinnedOnly: Bool, meteredSource: String, unmeteredOnly: Bool) throws {
        if ctx.out.json { try ctx.out.emit(s); return }
        if pinnedOnly && s.downloaded == 0 && s.waitingForUnmetered == 0 { ctx.out.line("No pinned content to download.") }
        if !pinnedOnly { ctx.out.line("Synced \(s.done) change(s)" + (s.conflicts > 0 ? ", \(s.conflicts) conflict(s)" : "")
                     + (s.failed > 0 ? ", \(s.failed) failed" : "")
                     + (s.skipped > 0 ? ", \(s.skipped) waiting behind another change" : "") + ".") }
        if s.downloaded > 0 { ctx.out.line("Downloaded \(s.downloaded) pinned file(s).") }
        if s.held > 0 { ctx.out.note("\(s.held) paused or cancelled change(s) wait for `vault transfers resume`") }
        if s.waitingForUnmetered > 0 {
            ctx.out.note("\(s.waitingForUnmetered) large transfer(s) wait for an unmetered network (metered per \(meteredSource))"
                         + (unmeteredOnly ? "; the policy requires it" : "; `vault sync --allow-metered` sends them now"))
        }
        if s.conflicts > 0 {
            ctx.out.warn("conflicts were left untouched: the server's newer versions were not overwritten")
        }
        if s.failed > 0 {
            ctx.out.warn("\(s.failed) change(s) failed for reasons of their own (see `vault status`); the others went on, and the next sync tries them again")
        }
    }

    static func runTransfers(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 2)
        let sub = a.positionals.first
        // Listing, pause and cancel may run beside a running `vault sync`; resume is a sync itself.
        let vault = try ctx.openVault(lock: sub == "resume" ? .sync : .control)
        if let m = a.values["metered"] {
            guard ["yes", "no", "auto"].contains(m) else { throw VaultError(.usage, "--metered takes yes, no or auto") }
            try NetworkCost.setMetered(m, vault: vault)
        }
        if let t = a.values["large-threshold"] {
            guard let b = ByteCount.parse(t) else { throw VaultError(.usage, "--large-threshold takes a size like 50M") }
            try NetworkCost.setLargeTransferBytes(b, vault: vault)
        }
        if let sub {
            let target = try a.positionals.dropFirst().first.map { try vault.resolve($0) }
            switch sub {
            case "resume":
                try SyncClient.release(vault: vault, nodeId: target?.id)
                try push(ctx, vault, a)
            case "pause", "cancel":
                guard let target else { throw VaultError(.usage, "vault transfers \(sub) PATH") }
                let cancel = sub == "cancel", p = try vault.path(of: target)
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
                guard n > 0 else { throw VaultError(.notFound, "\(p) has no pending upload to \(sub)") }
                let msg = (sub == "pause" ? "Paused the upload of \(p)." : "Cancelled the upload of \(p) (the server's partial copy is freed; the file stays in the vault).") + note
                if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg + " `vault transfers resume \(p)` sends it again.") }
            default:
                throw VaultError(.usage, "unknown transfers action '\(sub)'", hint: "resume [PATH], pause PATH or cancel PATH")
            }
            return
        }
        let list = try TransferInfo.all(in: vault, besideSync: vault.isBesideSync)
        if ctx.out.json { try ctx.out.emit(list); return }
        if list.isEmpty { ctx.out.line("No transfers."); return }
        for t in list { ctx.out.line(t.summary) }
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

/// A one-line progress bar (bytes, rate, ETA) on standard error when it is a terminal; nothing
/// at all when piped or redirected.
final class ProgressLine {
    private let enabled: Bool
    private var path: String?
    private var started = Date()
    private var startBytes: Int64 = 0

    init(enabled: Bool) { self.enabled = enabled && isatty(2) == 1 }

    func update(_ p: TransferProgress) {
        guard enabled else { return }
        if path != p.path { path = p.path; started = Date(); startBytes = p.bytesDone }
        let elapsed = Date().timeIntervalSince(started)
        let rate = elapsed > 0.5 ? Double(p.bytesDone - startBytes) / elapsed : 0
        let percent = p.bytesTotal > 0 ? p.bytesDone * 100 / p.bytesTotal : 100
        var line = "\(p.direction == .upload ? "up" : "down") \(DisplayText.escaped(p.path))  \(percent)%  "
            + "\(ByteCount.format(UInt64(max(0, p.bytesDone))))/\(ByteCount.format(UInt64(max(0, p.bytesTotal))))"
        if rate > 0 {
            line += "  \(ByteCount.format(UInt64(rate)))/s  ETA \(Int((Double(p.bytesTotal - p.bytesDone) / rate).rounded(.up))) s"
        }
        StandardStream.error.write("\r\u{1b}[K" + line)
    }

    func clear() {
        guard enabled, path != nil else { return }
        StandardStream.error.write("\r\u{1b}[K")
        path = nil
    }
}
