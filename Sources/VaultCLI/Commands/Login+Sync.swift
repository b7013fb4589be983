import Foundation
import VaultArguments
import VaultCore
import VaultCrypto
import VaultSync
import VaultAgent

/// `vault login`: connect the vault to a server.
struct LoginCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "login", abstract: "connect the vault to a server over https:// (http:// only on this machine; the token and server password stay in the encrypted database)",
                             discussion: "A server outside the policy's allowedServers is refused. TLS is always verified (--ca-file trusts a private CA); plain http:// to another machine needs --insecure-http, and then every command that connects says so.")
    }

    @Option(help: "the server's address: https://HOST[:PORT][/PATH]", valueName: "url")
    var server: String
    @Option(help: "the user name on the server", valueName: "name")
    var user: String
    @Option(help: "read the server password from the first line of FILE (else it is asked on the terminal)", valueName: "file", completion: .file)
    var serverPasswordFile: String?
    @Option(help: "trust the CA certificate(s) in FILE (PEM) for this server", valueName: "file", completion: .file)
    var caFile: String?
    @Flag(help: "allow plain http:// to another machine (passwords and tokens cross the network unencrypted)")
    var insecureHttp = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if user.isEmpty { throw ValidationError("--user cannot be empty") }
    }

    struct Result: Encodable {
        var ok = true
        var message: String
        var server: String
        var user: String
    }

    func run(_ ctx: CommandContext) throws {
        _ = try ServerAddress(server)   // a malformed address is refused before anything is asked
        if let caFile { _ = try SourceFile(caFile, accepting: .regular, what: "the CA file") }   // libcurl would block on a FIFO
        let password: SecureBytes   // read before the vault is locked: a slow source never holds it
        if let f = serverPasswordFile {
            password = try PasswordInput.fromFile(f)
        } else {
            password = try PasswordInput.fromTerminal("Server password for \(user): ")
        }
        let vault = try ctx.openVault()
        let client = try SyncClient.login(vault: vault, serverURL: server, user: user, password: password,
                                          caFile: caFile, insecureHTTP: insecureHttp,
                                          policy: ctx.policy, warn: { ctx.out.warn($0) })
        ctx.queuedChanges(vault)   // the agent, if one runs, opens the push channel and syncs
        let msg = "Logged in to \(client.serverURL) as \(user)."
        if ctx.out.json { try ctx.out.emit(Result(message: msg, server: client.serverURL, user: user)) } else { ctx.out.line(msg) }
    }
}

/// `--concurrency` and `--allow-metered`: how a push runs (`sync`, `transfers resume`).
struct PushOptions: ParsableArguments {
    @Option(help: "parallel uploads (1 to 16)", valueName: "n")
    var concurrency: Int = SyncClient.defaultConcurrency
    @Flag(help: "send large transfers now even on a metered network (unless the policy forbids it)")
    var allowMetered = false

    func validate() throws {
        guard (1...16).contains(concurrency) else { throw ValidationError("--concurrency takes a number from 1 to 16") }
    }
}

/// `vault sync`: push local changes, then download pinned content.
struct SyncCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "sync", abstract: "push local changes to the server (folders, resumable uploads, moves, deletes), then download pinned content (--pinned-only: just that)",
                             discussion: "Conflicts are left untouched (the server's newer versions are never overwritten). On a metered network large transfers wait unless --allow-metered.")
    }

    @OptionGroup var push: PushOptions
    @Flag(help: "only download pinned content (what `vault pin` starts in the background)")
    var pinnedOnly = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func run(_ ctx: CommandContext) throws {
        if let agent = ctx.agent() {
            // The agent runs the pass (queued after the one it may be running); a locked agent
            // leaves it to this command when a password source was named.
            do {
                let r = try agent.sync(WorkOptions(allowMetered: push.allowMetered, concurrency: push.concurrency, pinnedOnly: pinnedOnly))
                guard let summary = r.summary else { throw VaultError(.io, "the vault agent's sync pass gave no summary") }
                try Self.report(ctx, summary, pinnedOnly: pinnedOnly, meteredSource: r.meteredSource ?? "?", unmeteredOnly: r.unmeteredOnly)
                return
            } catch let e as VaultError where e.kind == .locked && ctx.password.isExplicit {}
        }
        let vault = try ctx.openVault(lock: .sync)   // `vault transfers` (list, pause, cancel) may run beside it
        try Self.push(ctx, vault, push, pinnedOnly: pinnedOnly)
    }

    static func push(_ ctx: CommandContext, _ vault: Vault, _ options: PushOptions, pinnedOnly: Bool) throws {
        let bar = ProgressLine(enabled: !ctx.out.json)
        let client = try ctx.syncClient(vault, say: { bar.clear(); if !ctx.out.json { ctx.out.note($0) } })
        client.onProgress = bar.update
        // Large uploads wait on a metered network unless allowed (never when the policy forbids it).
        let unmeteredOnly = ctx.policy.largeTransfersUnmeteredOnly.value == true
        let (hold, cost) = try NetworkCost.largeTransferHold(vault: vault, policy: ctx.policy, allowMetered: options.allowMetered,
                                                             environment: ctx.environment)
        var s = pinnedOnly ? PushSummary() : try client.push(concurrency: options.concurrency, holdLargeFrom: hold)
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
}
