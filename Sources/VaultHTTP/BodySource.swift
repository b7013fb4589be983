/// Produces a request body piece by piece for libcurl's read callback, never offering more room
/// than the declared length leaves, and failing when a stream ends early.
struct BodySource {
    private var bytes: [UInt8]
    private var stream: ((UnsafeMutableRawBufferPointer) throws -> Int)?
    private let length: Int64
    private(set) var sent: Int64 = 0

    init(_ body: HTTPBody) {
        switch body {
        case .none:
            bytes = []; stream = nil; length = 0
        case .bytes(let b):
            bytes = b; stream = nil; length = Int64(b.count)
        case .stream(let len, let read):
            bytes = []; stream = read; length = max(0, len)
        }
    }

    /// Fills up to `buffer.count` bytes; returns 0 only when the whole body has been sent.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let remaining = length - sent
        guard remaining > 0, buffer.count > 0 else { return 0 }
        let room = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(min(Int64(buffer.count), remaining))])
        let n: Int
        if let stream {
            n = try stream(room)
            guard n > 0, n <= room.count else {
                throw HTTPError.transport(
                    code: 26, // CURLE_READ_ERROR
                    message: n == 0 ? "request body ended after \(sent) of \(length) bytes"
                                    : "request body reader returned \(n) for a \(room.count)-byte buffer")
            }
        } else {
            let start = Int(sent)
            n = room.count
            bytes.withUnsafeBytes { src in
                room.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[start..<(start + n)]))
            }
        }
        sent += Int64(n)
        return n
    }
}
