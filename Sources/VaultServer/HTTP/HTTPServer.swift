import Foundation
internal import CVaultShims
internal import CMicroHTTPD

/// The libmicrohttpd adapter: a thread-per-connection daemon whose callbacks turn MHD calls
/// into `HTTPRequest`s for the router, stream bodies into sinks and queue `HTTPResponse`s.
/// It holds no API logic.
final class HTTPServer: @unchecked Sendable {
    // SAFETY: `daemon` is set once by `start` and cleared once by `stop`, both on the main thread;
    // the rest is immutable.
    private var daemon: OpaquePointer?
    let router: Router
    let service: VaultService
    let log: AccessLog

    init(service: VaultService, log: AccessLog) {
        self.service = service; self.router = service.makeRouter(); self.log = log
    }

    /// Starts listening; returns the bound port.
    func start(host: String, port: UInt16, tlsKeyPEM: String?, tlsCertPEM: String?, maxConnections: Int) throws -> UInt16 {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let d = CVaultShims_mhd_start(host, port, { cls, conn, url, method, _, data, size, conCls in
            let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
            return server.access(conn!, url: String(cString: url!), method: String(cString: method!),
                                 data: data, size: size!, slot: conCls!) ? .YES : .NO
        }, me, { cls, _, conCls, toe in
            let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
            guard let conCls, let raw = conCls.pointee else { return }
            conCls.pointee = nil
            let ex = Unmanaged<Exchange>.fromOpaque(raw).takeRetainedValue()
            server.completed(ex, ok: toe == .REQUEST_TERMINATED_COMPLETED_OK)
        }, me, tlsKeyPEM, tlsCertPEM, 256 * 1024, 300, UInt32(maxConnections))
        guard let d else { throw APIError.internal("cannot listen on \(host):\(port) (address in use or TLS setup failed)") }
        daemon = d
        return CVaultShims_mhd_bound_port(d)
    }

    /// Stops accepting, then waits for open connections to end. The corresponding C functions
    /// are `MHD_quiesce_daemon` and `MHD_stop_daemon`.
    func stop() {
        guard let d = daemon else { return }
        daemon = nil
        _ = MHD_quiesce_daemon(d)
        MHD_stop_daemon(d)
    }

    // MARK: - Callbacks

    private func access(_ conn: OpaquePointer, url: String, method: String, data: UnsafePointer<CChar>?,
                        size: UnsafeMutablePointer<Int>, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Bool {
        guard let raw = slot.pointee else {
            let ex = Exchange(method: method, path: url)
            slot.pointee = Unmanaged.passRetained(ex).toOpaque()
            begin(ex, conn)
            // A refused large body is answered at once (no 100-continue) rather than read.
            if let failure = ex.failure, (ex.request?.contentLength ?? 0) > 1 << 20 {
                ex.responded = true
                queue(conn, failure, ex)
            }
            return true
        }
        let ex = Unmanaged<Exchange>.fromOpaque(raw).takeUnretainedValue()
        let n = size.pointee
        if n > 0 {
            size.pointee = 0
            if ex.responded { return true }
            var piece = UnsafeRawBufferPointer(start: data, count: n)
            var cut = false
            if let drop = ex.dropAfter, ex.bodyBytes + Int64(n) >= drop {
                piece = UnsafeRawBufferPointer(rebasing: piece[0..<Int(max(0, drop - ex.bodyBytes))])
                cut = true
            }
            ex.consume(piece)
            return !cut
        }
        if ex.responded { return true }
        ex.responded = true
        queue(conn, ex.finish(), ex)
        return true
    }

    private func completed(_ ex: Exchange, ok: Bool) {
        if !ok { ex.abandon() }
        if ex.status == 0 { ex.status = 499 }
        log.record(ex)
    }

    /// Routing, auth and faults once the headers are in.
    private func begin(_ ex: Exchange, _ conn: OpaquePointer) {
        var request: HTTPRequest
        do {
            request = try HTTPRequest(method: ex.method, rawPath: ex.path, rawQuery: Self.values(conn, kind: .GET_ARGUMENT_KIND),
                                      rawHeaders: Self.values(conn, kind: .HEADER_KIND))
        } catch {
            ex.failure = .error(.unexpected(error))
            return
        }
        ex.request = request
        if service.config.testFaults && !ex.path.hasPrefix("/v1/test/") {
            for action in service.faults.actions() {
                switch action {
                case .delay(let ms): usleep(UInt32(ms) * 1000)
                case .fail(let e): ex.failure = .error(e); return
                }
            }
            if (request.contentLength ?? 0) > 0 || request.header("transfer-encoding") != nil {
                ex.dropAfter = service.faults.claimDrop()
            }
        }
        switch router.match(method: ex.method, segments: request.segments) {
        case .notFound:
            ex.failure = .error(APIError(status: 404, code: "route_not_found", message: "no route for \(ex.method) \(ex.path)"))
        case .methodNotAllowed(let allowed):
            ex.failure = .error(APIError(status: 405, code: "method_not_allowed",
                                         message: "\(ex.method) is not allowed here",
                                         headers: [("Allow", allowed.joined(separator: ", "))]))
        case .found(let route, let params):
            request.pathParams = params
            ex.request = request
            do {
                let uid = route.requiresAuth ? try service.authenticate(request) : ""
                ex.userId = route.requiresAuth ? uid : nil
                ex.plan = try route.handler(RequestContext(request: request, userId: uid))
            } catch let e as APIError {
                ex.failure = .error(e)
            } catch {
                ex.failure = .error(.unexpected(error))
            }
        }
    }

    private func queue(_ conn: OpaquePointer, _ response: HTTPResponse, _ ex: Exchange) {
        var resp: OpaquePointer?
        switch response.body {
        case .bytes(let b):
            resp = b.withUnsafeBytes {
                MHD_create_response_from_buffer($0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress),
                                                .RESPMEM_MUST_COPY)
            }
        case .file(let f, let offset, let length):
            resp = MHD_create_response_from_fd_at_offset64(UInt64(length), f.release(), UInt64(offset))
        case .stream(let s):
            let box = Unmanaged.passRetained(StreamBox(s)).toOpaque()
            resp = MHD_create_response_from_callback(s.length.map { UInt64($0) } ?? UInt64.max, 16 * 1024, { cls, _, buf, max in
                let box = Unmanaged<StreamBox>.fromOpaque(cls!).takeUnretainedValue()
                guard let n = box.stream.read(into: UnsafeMutableRawBufferPointer(start: buf, count: max)) else {
                    return -1   // MHD_CONTENT_READER_END_OF_STREAM
                }
                return n
            }, box, { cls in
                let box = Unmanaged<StreamBox>.fromOpaque(cls!).takeRetainedValue()
                box.stream.close()
            })
        }
        guard let resp else { return }
        for (k, v) in response.headers { _ = MHD_add_response_header(resp, k, v) }
        ex.status = response.status
        ex.responseBytes = response.bodyCount
        _ = MHD_queue_response(conn, UInt32(response.status), resp)
        MHD_destroy_response(resp)
    }

    /// All values of one kind (headers or query arguments) as raw bytes, with the lengths
    /// libmicrohttpd reports; `HTTPRequest.init(method:rawPath:…)` decodes them (the query still
    /// percent-encoded, see the shim's unescape callback). The corresponding C function is
    /// `MHD_get_connection_values_n`.
    private static func values(_ conn: OpaquePointer, kind: MHD_ValueKind) -> [(key: [UInt8], value: [UInt8])] {
        final class Box { var pairs: [(key: [UInt8], value: [UInt8])] = [] }
        let box = Box()
        withExtendedLifetime(box) {
            _ = MHD_get_connection_values_n(conn, kind, { cls, _, key, keySize, value, valueSize in
                let box = Unmanaged<Box>.fromOpaque(cls!).takeUnretainedValue()
                guard let key else { return .YES }
                let bytes = { (p: UnsafePointer<CChar>?, n: Int) -> [UInt8] in
                    p.map { Array(UnsafeRawBufferPointer(start: $0, count: n)) } ?? []
                }
                box.pairs.append((bytes(key, keySize), bytes(value, valueSize)))
                return .YES
            }, Unmanaged.passUnretained(box).toOpaque())
        }
        return box.pairs
    }
}

/// Keeps a streaming body alive while libmicrohttpd reads it.
private final class StreamBox {
    let stream: StreamingBody
    init(_ s: StreamingBody) { stream = s }
}
