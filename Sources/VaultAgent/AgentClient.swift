import Foundation
import VaultKeys
import VaultSyncPlan
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// A connection to the running agent of one vault, for commands (and the agent's own workers).
/// One connection serves every request of a command, in order; a `yield` lasts until the
/// connection closes, i.e. until the command's process ends (or this object is released).
public final class AgentClient: SessionAgentLink {
    let socket: UnixSocket
    /// Requests for the agent's own worker: a key fetched this way is not a use of the vault.
    let background: Bool
    public let paths: AgentPaths

    init(socket: UnixSocket, paths: AgentPaths, background: Bool) {
        self.socket = socket; self.paths = paths; self.background = background
    }

    /// The agent of the local copy `localId` (`VaultLayout.localId`) when one runs (and is this
    /// user's), else nil.
    public static func connect(localId: String, environment: [String: String], background: Bool = false) throws -> AgentClient? {
        guard let paths = AgentPaths(localId: localId, environment: environment) else { return nil }
        return try connect(socketPath: paths.socket, paths: paths, background: background)
    }

    static func connect(socketPath: String, paths: AgentPaths, background: Bool = false) throws -> AgentClient? {
        guard let sock = try UnixSocket.connect(to: socketPath) else { return nil }
        guard let peer = sock.peer(), peer.uid == getuid() else {
            throw VaultError(.insecure, "the socket \(socketPath) is served by another user's process; it was not used",
                             hint: "remove it; the agent creates its own")
        }
        return AgentClient(socket: sock, paths: paths, background: background)
    }

    /// Sends one request and waits for its answer (`timeout` nil: as long as it takes, for a
    /// sync pass). An answer that is an error is thrown as the `VaultError` it carries.
    func call(_ request: AgentRequest, secret: SecureBytes? = nil, timeout: TimeInterval? = 60) throws -> (AgentResponse, SecureBytes?) {
        do {
            try AgentWire.send(request, secret: secret, on: socket)
            guard let (response, key) = try AgentWire.receive(AgentResponse.self, on: socket, firstByteTimeout: timeout) else {
                throw AgentWire.Closed()
            }
            if let e = response.error, !response.ok { throw e.vaultError }
            return (response, key)
        } catch is AgentWire.TimedOut {
            throw VaultError(.busy, "the vault agent did not answer in time", hint: "`vault agent status`; restart it if it hangs")
        } catch is AgentWire.Closed {
            throw VaultError(.io, "the vault agent closed the connection", hint: "`vault agent status`; the agent may have stopped")
        } catch is AgentWire.Malformed {
            throw VaultError(.io, "the vault agent sent an answer this vault cannot read", hint: "restart the agent (it may be another version)")
        }
    }

    // MARK: - SessionAgentLink

    public func session(countsAsUse: Bool) throws -> (KeyringSession.Record?, lockedReason: String?) {
        var r = AgentRequest(.session)
        r.background = background || !countsAsUse
        let (response, key) = try call(r)
        guard let info = response.session, let key else { return (nil, response.lockedReason) }
        return (info.record(key), nil)
    }

    public func hold(masterKey: SecureBytes, epoch: UInt32, idleTimeout: Int64, absoluteTimeout: Int64) throws {
        var r = AgentRequest(.hold)
        r.epoch = epoch; r.idleTimeout = idleTimeout; r.absoluteTimeout = absoluteTimeout
        _ = try call(r, secret: masterKey)
    }

    public func replace(masterKey: SecureBytes, epoch: UInt32) throws {
        var r = AgentRequest(.replace)
        r.epoch = epoch
        _ = try call(r, secret: masterKey)
    }

    @discardableResult
    public func lock(reason: String?) throws -> Bool {
        var r = AgentRequest(.lock)
        r.reason = reason
        return try call(r).0.wasUnlocked ?? false
    }

    public func yieldVault() throws -> AnyObject? {
        guard !background else { return nil }
        _ = try call(AgentRequest(.yield), timeout: 30)
        return YieldToken(self)
    }

    /// While it lives, the agent's background work stays stopped (see `yieldVault`).
    final class YieldToken {
        let client: AgentClient
        init(_ client: AgentClient) { self.client = client }
        deinit { _ = try? client.call(AgentRequest(.release), timeout: 5) }
    }

    // MARK: - Commands

    /// What the agent holds and does.
    public func status() throws -> AgentStatus {
        guard let s = try call(AgentRequest(.status)).0.status else { throw VaultError(.io, "the vault agent sent no status") }
        return s
    }

    /// Tells the agent that changes wait for the server.
    public func notifyWork() throws { _ = try call(AgentRequest(.work)) }

    /// Has the agent run a sync pass now, and waits for its result.
    public func sync(_ options: SyncRequest) throws -> WorkResult {
        var r = AgentRequest(.sync)
        r.sync = options
        guard let w = try call(r, timeout: nil).0.work else { throw VaultError(.io, "the vault agent sent no sync result") }
        if let e = w.error { throw e.vaultError }
        return w
    }

    /// Locks and stops the agent.
    public func stop() throws { _ = try call(AgentRequest(.stop)) }
}

extension AgentClient {
    /// Locks every vault of this user that has an agent running, every local copy of each
    /// (`vault lock --all`); returns how many were unlocked.
    public static func lockAll(environment: [String: String]) -> Int {
        var n = 0
        for path in AgentPaths.allSockets(environment: environment) {
            let tag = ((path as NSString).lastPathComponent.dropFirst("agent-".count)).dropLast(".sock".count)
            guard let paths = AgentPaths(localId: String(tag), environment: environment),
                  let client = try? connect(socketPath: path, paths: paths) else { continue }
            if (try? client.lock(reason: "every vault was locked (`vault lock --all`)")) == true { n += 1 }
        }
        return n
    }
}
