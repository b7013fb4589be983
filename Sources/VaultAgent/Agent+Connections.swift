import Foundation
import VaultKeys
import VaultSyncPlan
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Serving commands: each connection on a thread of its own, its peer checked first.
extension Agent {
    func acceptLoop(_ listener: UnixSocket) {
        while true {
            guard let conn = listener.accept() else { usleep(10_000); continue }
            // Only this user: the socket is 0600 in a 0700 folder, and the kernel's word on the peer decides.
            guard let peer = conn.peer() else { log("refused a connection whose peer is unknown"); continue }
            guard peer.uid == getuid() else {
                log("refused a connection from uid \(peer.uid) (pid \(peer.pid)): only uid \(getuid()) may use this agent")
                continue
            }
            guard connections.enter(limit: Self.maxConnections) else {
                log("refused a connection from pid \(peer.pid): \(Self.maxConnections) are open already")
                continue
            }
            let t = Thread { [self] in
                serve(conn)
                connections.leave()
            }
            t.name = "vault-agent-conn"
            t.start()
        }
    }

    /// Answers requests in order until the peer closes; a `yield` lasts until then.
    private func serve(_ conn: UnixSocket) {
        var yields = 0
        defer {
            let n = yields
            if n > 0 { queue.async { [self] in for _ in 0..<n { work.endYield() } } }
        }
        while true {
            let received: (AgentRequest, SecureBytes?)?
            do { received = try AgentWire.receive(AgentRequest.self, on: conn, firstByteTimeout: nil) } catch {
                if error is AgentWire.Malformed { log("dropped a connection that sent a malformed request") }
                return
            }
            guard let (request, secret) = received else { return }
            var reply: (AgentResponse, SecureBytes?)
            do { reply = try handle(request, secret: secret, yields: &yields) } catch {
                reply = (AgentResponse.failure(VaultError.wrap(error)), nil)
            }
            do { try AgentWire.send(reply.0, secret: reply.1, on: conn) } catch { return }
        }
    }

    private func handle(_ r: AgentRequest, secret: SecureBytes?, yields: inout Int) throws -> (AgentResponse, SecureBytes?) {
        var response = AgentResponse()
        if [.yield, .work, .sync].contains(r.op) { queue.sync { session.noteUse() } }   // commands served or noticed
        switch r.op {
        case .status:
            response.status = queue.sync { statusNow() }
        case .session:
            let got = try queue.sync { try session.session(countsAsUse: r.background != true) }
            guard let (key, info) = got else {
                response.lockedReason = queue.sync { session.lockReason }
                return (response, nil)
            }
            response.session = info
            return (response, key)
        case .hold:
            guard let secret, secret.count == 32, let epoch = r.epoch, let idle = r.idleTimeout, let absolute = r.absoluteTimeout else {
                throw VaultError(.usage, "a hold request needs the key, its epoch and both timeouts")
            }
            response.session = try queue.sync {
                try session.hold(masterKey: secret, epoch: epoch, idle: idle, absolute: absolute)
                return session.info
            }
        case .replace:
            guard let secret, secret.count == 32, let epoch = r.epoch else { throw VaultError(.usage, "a replace request needs the key and its epoch") }
            try queue.sync { try session.replace(masterKey: secret, epoch: epoch) }
        case .lock:
            response.wasUnlocked = queue.sync { session.lock(reason: r.reason) }
        case .yield:
            queue.sync { work.beginYield() }?.wait()
            yields += 1
        case .release:
            guard yields > 0 else { break }
            yields -= 1
            queue.async { [self] in work.endYield() }
        case .work:
            queue.async { [self] in work.request("a command queued changes") }
        case .sync:
            let done = DispatchSemaphore(value: 0)
            let box = ResultBox()
            queue.async { [self] in
                work.enqueueSync(r.sync ?? SyncRequest()) { box.result = $0; done.signal() }
            }
            done.wait()
            response.work = box.result
        case .stop:
            queue.asyncAfter(deadline: .now() + 0.1) { [self] in shutdown("`vault agent stop`") }   // after this answer
        }
        return (response, nil)
    }

    private final class ResultBox: @unchecked Sendable {
        // SAFETY: written on the agent's queue before `done.signal()`, read after `done.wait()`.
        var result: WorkResult?
    }
}
