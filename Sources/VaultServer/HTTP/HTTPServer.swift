import Foundation
internal import CMicroHTTPDShims
internal import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// The libmicrohttpd adapter: its callbacks turn MHD calls into `HTTPRequest`s for the router,
/// stream bodies into sinks and queue `HTTPResponse`s. It holds no API logic.
///
/// Two modes. Pool (`threads` ≥ 1): a few threads do all socket work, and everything that
/// may block (route handlers, body sinks writing to disk, `finish`, password hashing) runs on
/// `WorkerPool` lanes while the connection is suspended; event streams suspend while idle. Thread
/// per connection (`threads` = 0): every connection has its thread and blocks in place.
///
/// Limits in both: a per-IP and a global connection cap (libmicrohttpd refuses more right after
/// accept), an idle timeout, and the request-head deadline (`ConnectionWatch`).
final class HTTPServer: @unchecked Sendable {
    // SAFETY: `daemon` and `ticker` are set once by `start` and cleared once by `stop`, both on
    // the main thread; the rest is immutable or thread-safe itself.
    private var daemon: OpaquePointer?
    let router: Router
    let service: VaultService
    let log: AccessLog
    let options: HTTPServerOptions
    private let workers: WorkerPool?
    private let census = ParkingCensus()
    let hangups: HangupWatcher
    private let watch: ConnectionWatch
    private var ticker: Thread?
    private let tickerStop = DispatchSemaphore(value: 0)
    private let tickerDone = DispatchSemaphore(value: 0)

    /// Body bytes one request may have waiting for its worker before reading pauses (it
    /// resumes as soon as the worker takes them).
    static let queueHigh = 256 << 10

    init(service: VaultService, log: AccessLog, options: HTTPServerOptions) throws {
        self.service = service; self.router = service.makeRouter(); self.log = log; self.options = options
        workers = options.threads > 0 ? WorkerPool(threads: options.workers) : nil
        hangups = try HangupWatcher()
        watch = ConnectionWatch(headerTimeout: Double(options.headerTimeout)) { fd in _ = shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Starts listening; returns the bound port.
    func start() throws -> UInt16 {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let o = options
        let d: OpaquePointer? = o.host.withCString { host in
            withOptionalCString(o.tlsKeyPEM) { key in
                withOptionalCString(o.tlsCertPEM) { cert in
                    withOptionalCString(o.tlsPriorities) { priorities in
                        var config = CMicroHTTPDShims_config(
                            ipv4_host: host, port: o.port, thread_pool_size: UInt32(o.threads),
                            connection_memory_limit: o.connectionMemory, idle_timeout_seconds: UInt32(o.idleTimeout),
                            connection_limit: UInt32(o.maxConnections), per_ip_connection_limit: UInt32(o.maxConnectionsPerIP),
                            tls_key_pem: key, tls_cert_pem: cert, tls_priorities: priorities)
                        return CMicroHTTPDShims_start(&config, { cls, conn, url, method, _, data, size, conCls in
                            let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
                            return server.access(conn!, url: String(cString: url!), method: String(cString: method!),
                                                 data: data, size: size!, slot: conCls!) ? .YES : .NO
                        }, me, { cls, conn, conCls, toe in
                            let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
                            if let conn { server.watch.requestEnded(HTTPServer.key(conn), now: MonotonicClock.now()) }
                            guard let conCls, let raw = conCls.pointee else { return }
                            conCls.pointee = nil
                            let ex = Unmanaged<Exchange>.fromOpaque(raw).takeRetainedValue()
                            server.completed(ex, ok: toe == .REQUEST_TERMINATED_COMPLETED_OK)
                        }, me, { cls, conn, _, code in
                            let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
                            guard let conn else { return }
                            if code == .CONNECTION_NOTIFY_STARTED {
                                server.watch.opened(HTTPServer.key(conn), fd: CMicroHTTPDShims_connection_fd(conn), now: MonotonicClock.now())
                            } else {
                                server.watch.closed(HTTPServer.key(conn))
                            }
                        }, me)
                    }
                }
            }
        }
        guard let d else {
            hangups.stop(); workers?.stop()
            throw ListenError(description: "cannot listen on \(o.host):\(o.port): the address is in use, or the TLS key, "
                             + "certificate or --tls-priorities string was refused (libmicrohttpd's message is above)")
        }
        daemon = d
        startTicker()
        return CMicroHTTPDShims_bound_port(d)
    }

    /// Stops accepting, ends event streams, waits for work in flight and for every suspended
    /// connection to resume (libmicrohttpd must not stop with one suspended), then closes all.
    func stop() {
        guard let d = daemon else { return }
        daemon = nil
        let listener = MHD_quiesce_daemon(d)
        service.hub.stop()
        if census.closeAndDrain(timeout: 30) {
            MHD_stop_daemon(d)
            workers?.stop()
        } else {
            // Stopping libmicrohttpd now would abort the process; it is exiting anyway.
            AccessLog.message("connections still waiting for work after 30 s; exiting without closing them")
        }
        if listener >= 0 { close(listener) }   // ours since quiesce, closed after the daemon stopped
        hangups.stop()
        tickerStop.signal()
        tickerDone.wait()
    }

    /// Twice a second: cut connections past their head deadline, schedule keep-alives.
    private func startTicker() {
        let t = Thread { [self] in
            while tickerStop.wait(timeout: .now() + .milliseconds(500)) == .timedOut {
                let now = MonotonicClock.now()
                watch.expire(now: now)
                service.hub.tick(now: service.clock())
            }
            tickerDone.signal()
        }
        t.name = "vault-ticker"
        t.stackSize = 256 << 10
        ticker = t
        t.start()
    }

    static func key(_ conn: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(conn))) }

    // MARK: - Callbacks

    private func access(_ conn: OpaquePointer, url: String, method: String, data: UnsafePointer<CChar>?,
                        size: UnsafeMutablePointer<Int>, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Bool {
        guard let raw = slot.pointee else {
            watch.headReceived(Self.key(conn))
            let ex = Exchange(method: method, path: url,
                              parking: Parking(connection: conn, suspends: workers != nil, census: census),
                              lane: workers?.lane())
            slot.pointee = Unmanaged.passRetained(ex).toOpaque()
            var request: HTTPRequest?
            do {
                // Decoded strictly here (a %00, a bad escape or invalid UTF-8 is a 400), not by libmicrohttpd.
                request = try HTTPRequest(method: ex.method, rawPath: ex.path,
                                          rawQuery: Self.rawValues(conn, kind: .GET_ARGUMENT_KIND),
                                          rawHeaders: Self.rawValues(conn, kind: .HEADER_KIND))
                if let r = request {
                    ex.requestId = RequestId.choose(incoming: r.header("x-request-id")) { Sodium.randomID() }
                    request?.clientAddress = ClientAddress.resolve(peer: Self.clientAddress(conn), forwardedFor: r.header("x-forwarded-for"),
                                                                   trusted: service.config.trustedProxies)
                }
            } catch {
                ex.requestId = Sodium.randomID()
                ex.failure = .error(.unexpected(error))
            }
            if let lane = ex.lane, ex.parking.parkForWork() {
                // libmicrohttpd calls again (no body yet) once resumed.
                ex.stage = .starting
                lane.run { [self] in begin(ex, request); ex.parking.unparkWork() }
            } else {
                begin(ex, request)
                headersDone(ex, conn)
            }
            return true
        }
        let ex = Unmanaged<Exchange>.fromOpaque(raw).takeUnretainedValue()
        if ex.stage == .starting {
            // The repeated first call, after `begin` ran on the lane.
            ex.stage = .receiving
            headersDone(ex, conn)
            if size.pointee == 0 { return true }
        }
        let n = size.pointee
        if n > 0 {
            size.pointee = 0
            return receive(ex, UnsafeRawBufferPointer(start: data, count: n))
        }
        if !ex.responded { answer(ex, conn) }
        return true
    }

    /// After routing: a refused large body is answered at once (no 100-continue) rather than
    /// read; otherwise decide where the body and `finish` run.
    private func headersDone(_ ex: Exchange, _ conn: OpaquePointer) {
        if let failure = ex.failure {
            if (ex.request?.contentLength ?? 0) > 1 << 20 {
                ex.responded = true
                queue(conn, failure, ex)
            }
            return
        }
        guard ex.lane != nil else { return }
        switch ex.plan {
        case .stream?: ex.bodyOffThread = true; ex.finishOffThread = true
        case .buffer?: ex.finishOffThread = true
        default: break
        }
    }

    /// One body piece: dropped after an answer, cut by an injected fault, handed to the lane
    /// (pool mode, streamed bodies) or consumed here.
    private func receive(_ ex: Exchange, _ data: UnsafeRawBufferPointer) -> Bool {
        if ex.responded { return true }
        var piece = data
        var cut = false
        if let drop = ex.dropAfter, ex.bodyBytes + Int64(piece.count) >= drop {
            piece = UnsafeRawBufferPointer(rebasing: piece[0..<Int(max(0, drop - ex.bodyBytes))])
            cut = true
        }
        ex.bodyBytes += Int64(piece.count)
        if ex.bodyOffThread, let lane = ex.lane {
            if ex.parking.queue(piece, high: Self.queueHigh) {
                lane.run {
                    while true {
                        let bytes = ex.parking.takeBody()
                        if bytes.isEmpty { return }
                        bytes.withUnsafeBytes { ex.consume($0) }
                    }
                }
            }
        } else {
            ex.consume(piece)
        }
        return !cut
    }

    /// The body is complete: queue the answer, computing it on the lane first when that may
    /// block.
    private func answer(_ ex: Exchange, _ conn: OpaquePointer) {
        if ex.finishOffThread, let lane = ex.lane {
            if let ready = ex.parking.takeReady() {
                ex.responded = true
                queue(conn, ready, ex)
                return
            }
            if !ex.finishing && ex.parking.parkForWork() {
                ex.finishing = true
                lane.run { ex.parking.finished(with: ex.finish()) }
                return
            }
            // Shutting down (no more suspensions): wait here for the lane instead.
            if !ex.finishing { ex.finishing = true; lane.run { ex.parking.finished(with: ex.finish()) } }
            let drained = DispatchSemaphore(value: 0)
            lane.run { drained.signal() }
            drained.wait()
            ex.responded = true
            queue(conn, ex.parking.takeReady() ?? .error(.internal("no answer")), ex)
            return
        }
        ex.responded = true
        queue(conn, ex.finish(), ex)
    }

    private func completed(_ ex: Exchange, ok: Bool) {
        let done = { [log] in
            if !ok { ex.abandon() }
            if ex.status == 0 { ex.status = 499 }
            log.record(ex)
        }
        if let lane = ex.lane { lane.run(done) } else { done() }
    }

    /// Routing, auth and faults once the headers are in.
    private func begin(_ ex: Exchange, _ head: HTTPRequest?) {
        guard var request = head else { return }   // not decodable: ex.failure says why
        ex.request = request
        // A balancer's health checks are not the test's requests: they would eat a fault's count
        // (its next N requests) and take every instance out of rotation.
        if service.config.testFaults && !ex.path.hasPrefix("/v1/test/") && ex.path != "/readyz" && ex.path != "/healthz" {
            for action in service.faults.actions(path: ex.path) {
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
            ex.failure = .error(APIError(status: 404, code: .routeNotFound, message: "no route for \(ex.method) \(ex.path)"))
        case .methodNotAllowed(let allowed):
            ex.failure = .error(APIError(status: 405, code: .methodNotAllowed,
                                         message: "\(ex.method) is not allowed here",
                                         headers: [("Allow", allowed.joined(separator: ", "))]))
        case .found(let route, let params):
            request.pathParams = params
            ex.request = request
            ex.route = route.pattern
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

    /// All values of one kind (headers or query arguments) as raw bytes, with the lengths
    /// libmicrohttpd reports; `HTTPRequest.init(method:rawPath:…)` decodes them (the query still
    /// percent-encoded, see the shim's unescape callback). The corresponding C function is
    /// `MHD_get_connection_values_n`.
    private static func rawValues(_ conn: OpaquePointer, kind: MHD_ValueKind) -> [(key: [UInt8], value: [UInt8])] {
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

/// The daemon did not start.
struct ListenError: Error, CustomStringConvertible {
    let description: String
}

/// Runs `body` with a C string for `value`, or NULL.
private func withOptionalCString<R>(_ value: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let value else { return body(nil) }
    return value.withCString { body($0) }
}
