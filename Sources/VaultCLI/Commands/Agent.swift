import Foundation
import VaultAgent
import VaultArguments
import VaultCore
import VaultPrimitives
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// `vault agent`: the background agent (auto-lock at the deadline, transfers, push channel).
struct AgentCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "agent", abstract: "the background agent: locks at the deadline (and on screen lock or sleep by policy), uploads in the background, listens for server changes",
                             discussion: "`vault agent` alone runs it in the foreground (log on standard error; Ctrl-C locks the vault and stops it); `vault agent install` runs it as a systemd user service.",
                             subcommands: [Run.self, Install.self, Uninstall.self, Status.self, Stop.self, Work.self, Listen.self],
                             defaultSubcommand: Run.self)
    }

    /// `vault agent [run]`: the agent in the foreground. This process becomes `vault-agent` (the
    /// executable beside `vault`, which links no HTTP client: docs/agent.md "Processes").
    struct Run: VaultCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "run", abstract: "run the agent in the foreground (what the systemd unit starts)",
                                 discussion: "The agent is the `vault-agent` program installed beside `vault`: this command becomes it (same process, same environment).")
        }
        func run(_ ctx: CommandContext) throws {
            let program = try AgentProgram.sibling(AgentProgram.name)
            let e = CurrentProcess.replace(with: program, arguments: [], environment: ctx.environment)
            throw VaultError(.io, "cannot start \(program): \(e)", hint: "check that it is executable (scripts/install.sh installs it beside vault)")
        }
    }

    /// `vault agent install`.
    struct Install: VaultCommand, ProducesJSON {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "install", abstract: "write this vault's systemd user unit, enable it and start it")
        }
        @Flag(help: "write and enable the unit without starting it now")
        var noStart = false
        @OptionGroup var output: OutputOptions
        func run(_ ctx: CommandContext) throws {
            _ = try AgentProgram.sibling(AgentProgram.name)   // the unit's `vault agent` runs it
            try AgentCommand.unitChange(ctx) { try $0.install(start: !noStart) }
        }
    }

    /// `vault agent uninstall`.
    struct Uninstall: VaultCommand, ProducesJSON {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "uninstall", abstract: "stop, disable and remove this vault's systemd user unit")
        }
        @OptionGroup var output: OutputOptions
        func run(_ ctx: CommandContext) throws { try AgentCommand.unitChange(ctx) { try $0.uninstall() } }
    }

    /// `vault agent status`.
    struct Status: VaultCommand, ProducesJSON {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "status", abstract: "whether the agent runs, and what it holds and does")
        }
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            var running: Bool
            var agent: AgentStatus?
            var unit: String
            var unitInstalled: Bool
            var unitState: String?
        }

        func run(_ ctx: CommandContext) throws {
            let unit = try AgentCommand.unit(ctx)
            let status = try ctx.agent()?.status()
            let state = unit.isInstalled ? unit.activeState() : nil
            if ctx.out.json {
                try ctx.out.emit(Result(running: status != nil, agent: status, unit: unit.path, unitInstalled: unit.isInstalled, unitState: state))
                return
            }
            if let status { AgentCommand.lines(status).forEach(ctx.out.line) } else {
                ctx.out.line("agent     not running: auto-lock is enforced at the next vault command only, and transfers run only in `vault sync`")
            }
            ctx.out.line("unit      " + (unit.isInstalled ? "\(unit.path)" + (state.map { " (systemd: \($0))" } ?? "") : "not installed (`vault agent install`)"))
        }
    }

    /// `vault agent stop`.
    struct Stop: VaultCommand, ProducesJSON {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "stop", abstract: "lock the vault and stop the agent")
        }
        @OptionGroup var output: OutputOptions
        func run(_ ctx: CommandContext) throws {
            guard let agent = ctx.agent() else { throw VaultError(.notFound, "no agent runs for this vault") }
            try agent.stop()
            let msg = "Stopped the agent; the vault is locked."
            if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
        }
    }

    /// `--parent PID`: the agent that started a helper (which dies with it).
    struct HelperOptions: ParsableArguments {
        @Option(help: "the agent's pid (the helper dies with it)", valueName: "pid")
        var parent: Int

        /// Binds the helper to its agent; refused when it was not started by one.
        func bind(_ name: String) throws {
            guard let pid = Int32(exactly: parent), AgentHelpers.bindToParent(pid) else { throw VaultError(.usage, "`vault agent \(name)` is started by the agent itself") }
        }
    }

    /// `vault agent work` (hidden): one sync pass for the agent, in a process of its own.
    struct Work: VaultCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "work", abstract: "one sync pass for the agent (started by the agent)", isHidden: true)
        }
        @OptionGroup var helper: HelperOptions
        @Flag(help: "send large transfers on a metered network") var allowMetered = false
        @Option(help: "parallel uploads", valueName: "n") var concurrency: Int?
        @Flag(help: "only download pinned content") var pinnedOnly = false
        @Option(help: "the most local items the pull may remove", valueName: "n") var maxDelete: Int?
        @Flag(help: "apply the pull even past --max-delete") var force = false

        func run(_ ctx: CommandContext) throws {
            try helper.bind("work")
            let options = SyncRequest(allowMetered: allowMetered, concurrency: concurrency, pinnedOnly: pinnedOnly,
                                      maxDelete: maxDelete, force: force)
            try ctx.out.emit(AgentHelpers.work(layout: ctx.layout, environment: ctx.environment, policy: ctx.policy, options: options,
                                               say: { ctx.out.note("vault agent work: " + $0) }))
        }
    }

    /// `vault agent listen` (hidden): the agent's push channel (the server's event stream).
    struct Listen: VaultCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "listen", abstract: "the push channel for the agent (started by the agent)", isHidden: true)
        }
        @OptionGroup var helper: HelperOptions
        @Option(help: "resume the event stream after this event", valueName: "id") var lastEventId: String?
        @Flag(help: "get a new token first") var refreshToken = false

        func run(_ ctx: CommandContext) throws {
            try helper.bind("listen")
            let code = AgentHelpers.listen(layout: ctx.layout, environment: ctx.environment, policy: ctx.policy,
                                           lastEventId: lastEventId, refreshToken: refreshToken,
                                           say: { ctx.out.note("vault agent listen: " + $0) })
            throw ReportedFailure(exitCode: code)
        }
    }

    /// This vault's systemd user unit.
    static func unit(_ ctx: CommandContext) throws -> SystemdUnit {
        let (file, _) = try Vault.readKeyslots(ctx.layout)
        return SystemdUnit(vaultId: file.body.vaultId, layout: ctx.layout, environment: ctx.environment, executable: try executablePath())
    }

    static func unitChange(_ ctx: CommandContext, _ change: (SystemdUnit) throws -> [String]) throws {
        let notes = try change(try unit(ctx))
        if ctx.out.json { try ctx.out.emit(OKResult(message: notes.joined(separator: " "))) } else { notes.forEach(ctx.out.line) }
    }

    /// The running `vault` executable.
    static func executablePath() throws -> String {
        do { return try CurrentProcess.executablePath() } catch { throw VaultError(.io, "cannot find the vault executable: \(error)") }
    }

    static func when(_ t: Double) -> String { Date(timeIntervalSince1970: t.rounded(.up)).description }

    /// The agent's status for people, line by line.
    static func lines(_ s: AgentStatus) -> [String] {
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
