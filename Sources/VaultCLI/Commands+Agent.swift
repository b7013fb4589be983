import Foundation
import VaultAgent
import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

extension VaultCommandLine {
    static let agentCommands: [Command] = [
        Command(name: "agent", usage: """
            vault agent                        # run in the foreground (log on stderr; Ctrl-C locks and stops it)
            vault agent install [--no-start]   # write the systemd user unit, enable and start it
            vault agent uninstall              # stop, disable and remove the unit
            vault agent status [--json]        # whether it runs, and what it holds and does
            vault agent stop                   # lock the vault and stop the agent
            """,
                summary: "the background agent: locks at the deadline (and on screen lock or sleep by policy), uploads in the background, listens for server changes",
                valued: ["concurrency", "last-event-id", "parent", "max-delete"], flags: ["allow-metered", "pinned-only", "refresh-token", "no-start", "force"],
                run: runAgent),
    ]

    static func runAgent(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 1)
        switch a.positionals.first {
        case nil:
            try Agent.run(layout: ctx.layout, environment: ctx.environment, policy: ctx.policy)
        case "install", "uninstall":
            let (file, _) = try Vault.readKeyslots(ctx.layout)
            let unit = SystemdUnit(vaultId: file.body.vaultId, layout: ctx.layout, environment: ctx.environment, executable: try executablePath())
            let notes = a.positionals[0] == "install" ? try unit.install(start: !a.flag("no-start")) : try unit.uninstall()
            if ctx.out.json { try ctx.out.emit(OKResult(message: notes.joined(separator: " "))) } else { notes.forEach(ctx.out.line) }
        case "status":
            try runAgentStatus(ctx)
        case "stop":
            guard let agent = ctx.agent() else { throw VaultError(.notFound, "no agent runs for this vault") }
            try agent.stop()
            let msg = "Stopped the agent; the vault is locked."
            if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
        case "work", "listen":
            try runAgentHelper(ctx, a)
        default:
            throw VaultError(.usage, "unknown agent action '\(a.positionals[0])'", hint: "vault agent [install | uninstall | status | stop]")
        }
    }

    /// The helpers the agent starts (not for people): one sync pass, or the push channel.
    static func runAgentHelper(_ ctx: CommandContext, _ a: Arguments) throws {
        guard let parent = a.values["parent"].flatMap(pid_t.init), AgentHelpers.bindToParent(parent) else {
            throw VaultError(.usage, "`vault agent \(a.positionals[0])` is started by the agent itself")
        }
        let say: (String) -> Void = { ctx.out.note("vault agent \(a.positionals[0]): " + $0) }
        if a.positionals[0] == "listen" {
            let code = AgentHelpers.listen(layout: ctx.layout, environment: ctx.environment, policy: ctx.policy,
                                           lastEventId: a.values["last-event-id"], refreshToken: a.flag("refresh-token"), say: say)
            throw ReportedFailure(exitCode: code)
        }
        let options = WorkOptions(allowMetered: a.flag("allow-metered"), concurrency: a.values["concurrency"].flatMap(Int.init),
                                  pinnedOnly: a.flag("pinned-only"), maxDelete: a.values["max-delete"].flatMap(Int.init), force: a.flag("force"))
        try ctx.out.emit(AgentHelpers.work(layout: ctx.layout, environment: ctx.environment, policy: ctx.policy, options: options, say: say))
    }

    static func executablePath() throws -> String {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { throw VaultError(.io, "cannot find the vault executable: \(String(cString: strerror(errno)))") }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    struct AgentStatusJSON: Encodable {
        var running: Bool
        var agent: AgentStatus?
        var unit: String
        var unitInstalled: Bool
        var unitState: String?
    }

    static func runAgentStatus(_ ctx: CommandContext) throws {
        let (file, _) = try Vault.readKeyslots(ctx.layout)
        let unit = SystemdUnit(vaultId: file.body.vaultId, layout: ctx.layout, environment: ctx.environment, executable: try executablePath())
        let status = try ctx.agent()?.status()
        let state = unit.isInstalled ? unit.activeState() : nil
        if ctx.out.json {
            try ctx.out.emit(AgentStatusJSON(running: status != nil, agent: status, unit: unit.path, unitInstalled: unit.isInstalled, unitState: state))
            return
        }
        if let status { agentLines(status).forEach(ctx.out.line) } else {
            ctx.out.line("agent     not running: auto-lock is enforced at the next vault command only, and transfers run only in `vault sync`")
        }
        ctx.out.line("unit      " + (unit.isInstalled ? "\(unit.path)" + (state.map { " (systemd: \($0))" } ?? "") : "not installed (`vault agent install`)"))
    }

    static func when(_ t: Double) -> String { Date(timeIntervalSince1970: t.rounded(.up)).description }

    /// The agent's status for people, line by line.
    static func agentLines(_ s: AgentStatus) -> [String] {
        var lines = ["agent     running (pid \(s.pid), since \(when(s.startedAt))): auto-lock at the deadline, without waiting for a command"]
        if let session = s.session {
            lines.append("session   unlocked; locks at " + (session.locksAt.map(when) ?? "no time (no timeout)")
                         + " (idle \(session.idleTimeout > 0 ? Duration.describe(session.idleTimeout) : "none") after the last use at \(when(session.lastUsedAt)),"
                         + " absolute \(session.absoluteTimeout > 0 ? Duration.describe(session.absoluteTimeout) : "none"))")
        } else {
            lines.append("session   locked" + (s.lockReason.map { " — \($0)" } ?? "") + (s.lockedAt.map { " (at \(when($0)))" } ?? ""))
        }
        lines.append("locks on  screen lock: \(s.lockOnScreenLock ? "yes" : "no") (lockOnScreenLock); sleep: \(s.lockOnSuspend ? "yes" : "no") (lockOnSuspend)"
                     + (s.sleepInhibitor ? ", sleep delayed until locked" : ""))
        lines.append("buses     " + s.buses.joined(separator: "; "))
        lines.append("memory    " + (s.memoryWatch ?? "pressure not watched") + "; \(s.work.pressureEvents) pressure event(s)")
        var work = "transfers \(s.work.state); \(s.work.passes) pass(es)"
        if let r = s.work.lastResult { work += "; last: \(r)" }
        if let at = s.work.lastPassAt { work += " at \(when(at))" }
        if let e = s.work.lastError { work += "; last error: \(e)" }
        if let next = s.work.nextAttemptAt { work += "; next attempt at \(when(next))" }
        lines.append(work)
        let push = s.work.loggedIn == false ? "not used (not logged in to a server)"
            : (s.events.connected ? "connected" : "not connected") + "; \(s.events.events) event(s)"
              + (s.events.lastEventId.map { ", last id \($0)" } ?? "") + (s.events.lastError.map { "; \($0)" } ?? "")
        lines.append("push      " + push)
        return lines
    }
}
