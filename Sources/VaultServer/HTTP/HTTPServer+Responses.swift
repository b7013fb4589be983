import Foundation
internal import CMicroHTTPDShims
internal import CMicroHTTPD

/// Turning `HTTPResponse`s into libmicrohttpd responses, and reading a connection's head.
extension HTTPServer {
    func queue(_ conn: OpaquePointer, _ response: HTTPResponse, _ ex: Exchange) {
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
            let box = StreamBox(s)
            if let live = s as? LiveBody {
                let parking = ex.parking
                live.onWake { parking.signal() }
                box.live = live
                box.parking = parking
                box.fd = CMicroHTTPDShims_connection_fd(conn)
                box.hangups = hangups
                box.hangupToken = hangups.watch(fd: box.fd) { live.clientGone() }
                if !parking.suspends {
                    // Thread per connection: the wait happens inside the reader, where
                    // libmicrohttpd counts it as idle time.
                    let seconds = UInt32(options.idleTimeout)
                    box.waited = { CMicroHTTPDShims_restart_idle_timer(conn, seconds) }
                }
            }
            let raw = Unmanaged.passRetained(box).toOpaque()
            resp = MHD_create_response_from_callback(s.length.map { UInt64($0) } ?? UInt64.max, 16 * 1024,
                                                     streamReader, raw, streamDone)
            if resp == nil { streamDone(raw) }
        }
        guard let resp else { return }
        for (k, v) in response.headers { _ = MHD_add_response_header(resp, k, v) }
        if !ex.requestId.isEmpty { _ = MHD_add_response_header(resp, "X-Request-Id", ex.requestId) }
        ex.status = response.status
        ex.responseBytes = response.bodyCount
        _ = MHD_queue_response(conn, UInt32(response.status), resp)
        MHD_destroy_response(resp)
    }

    /// The client's IPv4 address, "" when unknown.
    static func clientAddress(_ conn: OpaquePointer) -> String {
        var buf = [CChar](repeating: 0, count: 48)
        guard CMicroHTTPDShims_client_ipv4(conn, &buf, buf.count) == 0 else { return "" }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// libmicrohttpd's content reader for streaming bodies. A live body that has nothing yet parks
/// the connection: suspended in pool mode (return 0, libmicrohttpd asks again once resumed),
/// a blocked thread otherwise.
private let streamReader: MHD_ContentReaderCallback = { cls, _, buf, max in
    let box = Unmanaged<StreamBox>.fromOpaque(cls!).takeUnretainedValue()
    let buffer = UnsafeMutableRawBufferPointer(start: buf, count: max)
    guard let live = box.live, let parking = box.parking else {
        guard let n = box.stream.read(into: buffer) else { return -1 }   // MHD_CONTENT_READER_END_OF_STREAM
        return n
    }
    while true {
        parking.arm()
        switch live.poll(into: buffer) {
        case .bytes(let n): return n
        case .end: return -1            // MHD_CONTENT_READER_END_OF_STREAM
        case .failed: return -2         // MHD_CONTENT_READER_END_WITH_ERROR: close at once
        case .later:
            if parking.waitForSignal() { return 0 }
            box.waited?()
        }
    }
}

/// Called once libmicrohttpd is done with a streaming body (before it closes the socket).
private let streamDone: MHD_ContentReaderFreeCallback = { cls in
    let box = Unmanaged<StreamBox>.fromOpaque(cls!).takeRetainedValue()
    if let token = box.hangupToken { box.hangups?.unwatch(token, fd: box.fd) }
    box.stream.close()
}

/// Keeps a streaming body alive while libmicrohttpd reads it, with what a live body needs.
private final class StreamBox {
    let stream: StreamingBody
    var live: LiveBody?
    var parking: Parking?
    var hangups: HangupWatcher?
    var hangupToken: UInt64?
    var fd: Int32 = -1
    /// Called on the connection's thread after it waited inside the reader.
    var waited: (() -> Void)?
    init(_ s: StreamingBody) { stream = s }
}
