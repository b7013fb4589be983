import Foundation

/// One request's state across the access-handler calls libmicrohttpd makes for it.
final class Exchange {
    let startedAt = DispatchTime.now()
    let method: String
    let path: String
    var request: HTTPRequest?
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

    init(method: String, path: String) { self.method = method; self.path = path }

    /// Feeds one body piece to the plan; errors turn into `failure`.
    func consume(_ bytes: UnsafeRawBufferPointer) {
        bodyBytes += Int64(bytes.count)
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
        if let failure { return failure }
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
    }

    var elapsedMillis: Double {
        Double(DispatchTime.now().uptimeNanoseconds - startedAt.uptimeNanoseconds) / 1_000_000
    }
}
