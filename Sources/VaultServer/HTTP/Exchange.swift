import Foundation

/// One request's state across the access-handler calls libmicrohttpd makes for it.
///
/// In pool mode the blocking parts (`begin`'s route handler, body pieces of a streamed body,
/// `finish`, `abandon`) run in order on `lane`, while the connection is suspended or only
/// queues bytes; the connection's thread then touches only `stage`, `responded`, `bodyBytes`,
/// `dropAfter` and the flags set once the head is handled.
final class Exchange {
    let startedAt = DispatchTime.now()
    let method: String
    let path: String
    /// Where the connection waits (work off its thread, backpressure, a live body).
    let parking: Parking
    /// Pool mode: where this request's blocking work runs, in order.
    let lane: WorkerPool.Lane?
    /// `.starting` while the head is handled off the connection's thread.
    var stage: Stage = .receiving
    /// Set once the head is handled: body pieces go to `lane`.
    var bodyOffThread = false
    /// Set once the head is handled: `finish` runs on `lane`.
    var finishOffThread = false
    /// `finish` is queued on `lane`.
    var finishing = false
    var request: HTTPRequest?
    /// `X-Request-Id`: the balancer's, else made here; sent back and logged.
    var requestId = ""
    /// The matched route's pattern (`/v1/files/{id}`), for the log: never ids or names.
    var route: String?
    var userId: String?
    var plan: RequestPlan?
    /// An answer decided before or during the body; the rest of the body is discarded.
    var failure: HTTPResponse?
    var buffered: [UInt8] = []
    var bodyBytes: Int64 = 0
    /// Injected fault: close the connection after this many body bytes.
    var dropAfter: Int64?
    var responded = false
    var sinkClosed = false
    var status = 0
    var responseBytes: Int64 = 0

    enum Stage { case starting, receiving }

    init(method: String, path: String, parking: Parking, lane: WorkerPool.Lane?) {
        self.method = method; self.path = path; self.parking = parking; self.lane = lane
    }

    /// Feeds one body piece to the plan; errors turn into `failure`. The caller counts
    /// `bodyBytes`.
    func consume(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, let plan else { return }
        switch plan {
        case .respond: return
        case .buffer(let limit, _):
            guard buffered.count + bytes.count <= limit else {
                failure = .error(.tooLarge("the body is larger than \(limit) bytes"))
                buffered = []
                return
            }
            buffered.append(contentsOf: bytes)
        case .stream(let sink):
            do { try sink.receive(bytes) } catch {
                failure = .error(.unexpected(error))
                sink.abort(); sinkClosed = true
            }
        }
    }

    /// The answer once the body is complete.
    func finish() -> HTTPResponse {
        if let failure { closeUnsentBody(); return failure }
        switch plan {
        case .none: return .error(.internal("no plan"))
        case .respond(let r)?: return r
        case .buffer(_, let handler)?:
            let body = buffered
            buffered = []
            return VaultService.answer { try handler(body) }
        case .stream(let sink)?:
            sinkClosed = true
            return sink.finish()
        }
    }

    /// The connection ended without `finish` (client gone, dropped, shutdown).
    func abandon() {
        if !sinkClosed, case .stream(let sink)? = plan { sinkClosed = true; sink.abort() }
        if !responded { closeUnsentBody() }
    }

    /// A streaming response decided at the head (an event stream) that will never be sent:
    /// close it so it gives back what it holds.
    private func closeUnsentBody() {
        if case .respond(let r)? = plan, case .stream(let s) = r.body { s.close() }
    }

    var elapsedMillis: Double {
        Double(DispatchTime.now().uptimeNanoseconds - startedAt.uptimeNanoseconds) / 1_000_000
    }
}
