import Foundation
internal import CLinuxShims
import VaultAgent
import VaultCore
import VaultCrypto
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// The agent's helper processes, `vault agent work` and `vault agent listen`: run by the `vault`
/// binary (the `vault-agent` process links no HTTP client and no sync code). Each gets the
/// master key from the agent (a background request: not a use of the vault), holds it only
/// while it needs the vault, and dies with the agent.
enum AgentHelpers {
    /// Makes this helper die with the agent that started it (`--parent PID`); false when that
    /// agent is already gone.
    static func bindToParent(_ parent: Int32) -> Bool { CLinuxShims_die_with_parent(parent) == 0 }

    /// Opens the vault with the key the agent holds; `.locked` when it holds none.
    static func openVault(layout: VaultLayout, environment: [String: String], policy: EffectivePolicy,
                          lock: VaultLock.Request, warn: @escaping (String) -> Void) throws -> Vault {
        let agents = AgentConnections(environment: environment, background: true, warn: warn)
        let sessions = VaultSessions(layout: layout, environment: environment, policy: policy,
                                     agent: { agents.client(for: $0) }, warn: warn)
        let noPassword = PasswordSource(isExplicit: false) { _ in throw VaultError(.locked, "the vault is locked") }
        let vault = try sessions.open(password: noPassword, lock: lock)
        vault.budgetMax = policy.contentBudgetMax.value
        return vault
    }

    /// `vault agent work`: one sync pass, as `vault sync` runs it (`SyncPass`: push, pull, push
    /// what the pull produced, pinned downloads; or pinned downloads only), with the metered rules
    /// of `vault sync`; progress goes to the database as the transfers run. Never throws: a
    /// failure is in the result.
    static func work(layout: VaultLayout, environment: [String: String], policy: EffectivePolicy,
                            options: SyncRequest, say: @escaping (String) -> Void) -> WorkResult {
        var result = WorkResult(loggedIn: false)
        result.pinnedOnly = options.pinnedOnly
        do {
            let vault = try openVault(layout: layout, environment: environment, policy: policy, lock: .sync, warn: say)
            do { _ = try SyncAccount.require(vault) } catch {   // not logged in: nothing to sync, said as `vault sync` says it
                result.error = AgentError(VaultError.wrap(error))
                return result
            }
            result.loggedIn = true
            let client = try SyncClient(vault: vault, policy: policy, say: say, warn: say)
            let pass = try SyncPass.run(client, options, kind: SyncPass.kind(of: options), policy: policy, environment: environment)
            result.summary = pass.push
            result.pull = pass.pull
            result.meteredSource = pass.meteredSource
            result.unmeteredOnly = pass.unmeteredOnly
        } catch {
            result.error = AgentError(VaultError.wrap(error))
        }
        return result
    }

    /// `vault agent listen`: opens the push channel (the vault only while it reads the server
    /// address and token) and prints `ListenLine`s on standard output: `open`, then one per event.
    /// Returns the process exit code (`ListenExit`, or another `VaultError`'s own).
    static func listen(layout: VaultLayout, environment: [String: String], policy: EffectivePolicy,
                              lastEventId: String?, refreshToken: Bool, say: @escaping (String) -> Void) -> Int32 {
        let stream: ChangeEventStream
        do {
            let vault = try openVault(layout: layout, environment: environment, policy: policy, lock: .control, warn: say)
            guard try SyncAccount.load(from: vault) != nil else { return ListenExit.notLoggedIn }
            stream = try SyncClient(vault: vault, policy: policy, warn: say).changeEventStream(refreshToken: refreshToken)
        } catch {
            let e = VaultError.wrap(error)
            say("push channel: \(e.message)")
            return e.kind == .wrongPassword ? ListenExit.failed : e.exitCode
        }
        // The vault and its keys are released here: the stream holds only the address and token.
        do {
            try stream.run(lastEventId: lastEventId, onOpen: { emit(.open) }, onEvent: { emit(.event(id: $0.id)) })
            return ListenExit.ended
        } catch ChangeStreamError.tokenRefused {
            return ListenExit.tokenRefused
        } catch {
            say("push channel: \(error)")
            return ListenExit.failed
        }
    }

    private static func emit(_ line: ListenLine) {
        (line.text + "\n").utf8CString.withUnsafeBufferPointer { _ = write(1, $0.baseAddress, $0.count - 1) }
    }
}
