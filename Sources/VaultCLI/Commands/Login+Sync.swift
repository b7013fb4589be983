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

    @OptionGroup var account: ServerOptions
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    struct Result: Encodable {
        var ok = true
        var message: String
        var server: String
        var user: String
    }

    func run(_ ctx: CommandContext) throws {
        let password = try account.check()   // read before the vault is locked: a slow source never holds it
        let vault = try ctx.openVault()
        let client = try SyncClient.login(vault: vault, serverURL: account.server, user: account.user, password: password,
                                          caFile: account.caFile, insecureHTTP: account.insecureHttp,
                                          policy: ctx.policy, warn: { ctx.out.warn($0) })
        ctx.queuedChanges(vault)   // the agent, if one runs, opens the push channel and syncs
        let msg = "Logged in to \(client.serverURL) as \(account.user)."
        if ctx.out.json { try ctx.out.emit(Result(message: msg, server: client.serverURL, user: account.user)) } else { ctx.out.line(msg) }
    }
}

/// The server account `vault login` and `vault join` connect to.
struct ServerOptions: ParsableArguments {
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

    func validate() throws {
        if user.isEmpty { throw ValidationError("--user cannot be empty") }
    }

    /// Checks the address and the CA file before anything is asked, then reads the server
    /// password (from --server-password-file, else the terminal).
    func check() throws -> SecureBytes {
        _ = try ServerAddress(server)   // a malformed address is refused before anything is asked
        if let caFile { _ = try SourceFile(caFile, accepting: .regular, what: "the CA file") }   // libcurl would block on a FIFO
        if let f = serverPasswordFile { return try PasswordInput.fromFile(f) }
        return try PasswordInput.fromTerminal("Server password for \(user): ")
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

/// `vault sync`: two-way sync (push, pull, push what the pull produced, pinned downloads), once
/// or, with `--watch`, on every change the server announces.
struct SyncCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "sync", abstract: "sync both ways: push local changes, pull remote ones, download pinned content (--watch: keep syncing on every remote change)",
                             discussion: """
                             A change made both here and on another device is settled by the conflict rule (`vault config set conflicts`: keep-both or last-writer-wins) and listed by `vault conflicts`; nothing is overwritten without a revision to restore. A pull that would remove more than --max-delete local items stops before it changes anything; --force applies it. A server node that no device of the vault wrote (its record is missing or does not authenticate) is refused and listed by `vault status`, the rest applied, and the sync exits 6 while it is held. On a metered network large transfers wait unless --allow-metered. When a `vault agent` runs, it runs the sync.
                             """)
    }

    @OptionGroup var push: PushOptions
    @Option(help: "stop, changing nothing, when the pull would remove more than this many local items", valueName: "n")
    var maxDelete: Int = SyncOptions().maxDelete
    @Flag(help: "apply a pull that removes more than --max-delete items")
    var force = false
    @Flag(help: "after the sync, sync again on every change the server announces, until Ctrl-C")
    var watch = false
    @Flag(help: "only download pinned content (what `vault pin` starts in the background)")
    var pinnedOnly = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard maxDelete >= 0 else { throw ValidationError("--max-delete takes a number of items (0 or more)") }
        if watch && output.json { throw ValidationError("--watch runs until it is stopped and has no single result: leave out --json") }
        if pinnedOnly && (watch || force) { throw ValidationError("--pinned-only only downloads: it takes no --watch or --force") }
    }

    /// What `vault sync` did (`SyncReport`'s shape, also for `--pinned-only`): the push's counts,
    /// the pull's (absent for `--pinned-only`, which does not pull), pinned files downloaded and
    /// large transfers waiting for an unmetered network.
    struct Result: Encodable {
        var push: PushSummary
        var pull: PullSummary?
        var downloaded: Int
        var waitingForUnmetered: Int
    }

    /// What this command asks of a sync pass (here or in the agent).
    var request: SyncRequest {
        SyncRequest(allowMetered: push.allowMetered, concurrency: push.concurrency, pinnedOnly: pinnedOnly, maxDelete: maxDelete, force: force)
    }

    func run(_ ctx: CommandContext) throws {
        if watch { return try runWatch(ctx) }
        try syncOnce(ctx)
    }

    /// One sync, run by the vault agent when one runs (queued after its own pass), else here.
    func syncOnce(_ ctx: CommandContext) throws {
        if let agent = ctx.agent() {
            // A locked agent leaves it to this command when a password source was named.
            do {
                let r = try agent.sync(request)
                guard let summary = r.summary else { throw VaultError(.io, "the vault agent's sync pass gave no summary") }
                return try Self.report(ctx, summary, pull: pinnedOnly ? nil : r.pull ?? PullSummary(), pinnedOnly: pinnedOnly,
                                       downloaded: summary.downloaded, waitingForUnmetered: summary.waitingForUnmetered,
                                       meteredSource: r.meteredSource ?? "?", unmeteredOnly: r.unmeteredOnly)
            } catch let e as VaultError where e.kind == .locked && ctx.password.isExplicit {}
        }
        let vault = try ctx.openVault(lock: .sync)   // `vault transfers` (list, pause, cancel) may run beside it
        try Self.pass(ctx, vault, request, kind: SyncPass.kind(of: request), asSync: true)
    }

    /// Runs one sync pass here (`SyncPass`, with a progress line on a terminal) and reports it:
    /// `vault sync` and `sync --pinned-only` (`asSync`: the sync's result) and `vault transfers
    /// resume` (its result is the push's summary).
    static func pass(_ ctx: CommandContext, _ vault: Vault, _ request: SyncRequest, kind: SyncPass.Kind, asSync: Bool) throws {
        let bar = ProgressLine(enabled: !ctx.out.json)
        let client = try ctx.syncClient(vault, say: { bar.clear(); if !ctx.out.json { ctx.out.note($0) } })
        client.onProgress = bar.update
        let r: SyncPass.Result
        do { defer { bar.clear() }; r = try SyncPass.run(client, request, kind: kind, policy: ctx.policy, environment: ctx.environment) }
        if ctx.out.json && !asSync { return try ctx.out.emit(r.push) }
        try report(ctx, r.push, pull: r.pull, pinnedOnly: kind == .pinnedOnly, downloaded: r.push.downloaded,
                   waitingForUnmetered: r.push.waitingForUnmetered, meteredSource: r.meteredSource, unmeteredOnly: r.unmeteredOnly)
    }

    /// What a sync did, for people or as JSON (whether this command or the agent ran it); `pull`
    /// is nil when nothing was pulled (`--pinned-only`, `transfers resume`: then the push's line
    /// says "Synced", a two-way sync's "Pushed …, pulled …"). Refused server nodes, once reported,
    /// make the command exit 6.
    static func report(_ ctx: CommandContext, _ s: PushSummary, pull: PullSummary?, pinnedOnly: Bool = false,
                       downloaded: Int, waitingForUnmetered: Int, meteredSource: String, unmeteredOnly: Bool) throws {
        try printReport(ctx, s, pull: pull, pinnedOnly: pinnedOnly, downloaded: downloaded, waitingForUnmetered: waitingForUnmetered,
                        meteredSource: meteredSource, unmeteredOnly: unmeteredOnly)
        guard let refused = pull?.refused, let first = refused.first else { return }
        let e = VaultError(.integrity, "\(refused.count) node(s) on the server do not authenticate and were refused, not applied (the first: \(first.reason)); everything else was synced",
                           hint: "`vault status` lists them; no device of this vault wrote them (a script, a bug or a compromised server): check the server")
        throw ctx.out.json ? ReportedFailure(exitCode: e.exitCode) : e   // one JSON document: the report
    }

    private static func printReport(_ ctx: CommandContext, _ s: PushSummary, pull: PullSummary?, pinnedOnly: Bool,
                                    downloaded: Int, waitingForUnmetered: Int, meteredSource: String, unmeteredOnly: Bool) throws {
        if ctx.out.json {
            return try ctx.out.emit(Result(push: s, pull: pull, downloaded: downloaded, waitingForUnmetered: waitingForUnmetered))
        }
        if pinnedOnly && downloaded == 0 && waitingForUnmetered == 0 { ctx.out.line("No pinned content to download.") }
        let tail = (s.failed > 0 ? ", \(s.failed) failed" : "") + (s.skipped > 0 ? ", \(s.skipped) waiting behind another change" : "") + "."
        if let pull {
            ctx.out.line("Pushed \(s.done) change(s), pulled \(pull.applied) remote change(s)"
                         + (pull.removed > 0 ? " (\(pull.removed) item(s) removed here)" : "") + tail)
            if !pull.conflicts.isEmpty { ctx.out.line("\(pull.conflicts.count) conflict(s) settled (`vault conflicts` lists them).") }
        } else if !pinnedOnly {
            ctx.out.line("Synced \(s.done) change(s)" + (s.conflicts > 0 ? ", \(s.conflicts) conflict(s)" : "") + tail)
        }
        if downloaded > 0 { ctx.out.line("Downloaded \(downloaded) pinned file(s).") }
        if s.held > 0 { ctx.out.note("\(s.held) paused or cancelled change(s) wait for `vault transfers resume`") }
        if waitingForUnmetered > 0 {
            ctx.out.note("\(waitingForUnmetered) large transfer(s) wait for an unmetered network (metered per \(meteredSource))"
                         + (unmeteredOnly ? "; the policy requires it" : "; `vault sync --allow-metered` sends them now"))
        }
        if s.conflicts > 0 {
            ctx.out.warn("\(s.conflicts) change(s) still in conflict with the server (its newer versions were not overwritten): the next sync tries them again (see `vault status`)")
        }
        if s.failed > 0 {
            ctx.out.warn("\(s.failed) change(s) failed for reasons of their own (see `vault status`); the others went on, and the next sync tries them again")
        }
    }
}
