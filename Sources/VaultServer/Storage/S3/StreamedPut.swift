import Foundation
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// A one-shot upload body stored as object `content/<revisionId>` while it still arrives: a PUT
/// on a thread of its own reads the body's temp file behind `ContentWriter`, which reports each
/// write (`wrote(upTo:)`), so receiving and storing overlap instead of taking turns. The object
/// is unreferenced until the publishing transaction names `revisionId`; a body that fails (cut
/// off, too large, a checksum mismatch) aborts the PUT, or deletes the object if it was complete.
final class StreamedPut: @unchecked Sendable {
    // SAFETY: the mutable state is read and written with `condition` locked.
    let revisionId = Sodium.randomID()
    private let client: S3Client
    private let length: Int64
    private let file: POSIXFile
    private let condition = NSCondition()
    private var written: Int64 = 0
    private var ended = false
    private var aborted = false
    private var result: Result<Void, any Error>?

    init(client: S3Client, path: String, length: Int64) throws {
        self.client = client
        self.length = length
        file = try POSIXFile(path: path, flags: O_RDONLY)
        let thread = Thread { [self] in
            let r = Result { try client.put(S3Content.revisionKey(revisionId), length: length, read: { [self] in try read(into: $0) }) }
            condition.lock(); result = r; condition.broadcast(); condition.unlock()
        }
        thread.name = "s3-streamed-put"
        thread.start()
    }

    /// The PUT's body: the temp file's bytes from where it got to, waiting for more.
    private var sent: Int64 = 0
    private func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        condition.lock()
        while written <= sent && !ended && !aborted { condition.wait() }
        let available = written - sent, stop = aborted
        condition.unlock()
        if stop { throw APIError.internal("the upload body was given up") }
        guard available > 0 else { return 0 }
        let want = Int(min(Int64(buffer.count), available))
        let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: sent)
        sent += Int64(n)
        return n
    }

    /// `ContentWriter` wrote the body's first `count` bytes to the file.
    func wrote(upTo count: Int64) {
        condition.lock(); written = count; condition.broadcast(); condition.unlock()
    }

    /// The body ended after `count` bytes: waits for the PUT, and throws its failure (or that
    /// the body is not the length announced).
    func end(at count: Int64) throws {
        condition.lock()
        written = count; ended = true
        condition.broadcast()
        while result == nil { condition.wait() }
        let r = result!
        condition.unlock()
        guard count == length else {
            abort()
            throw APIError.badRequest("the body has \(count) bytes, not the \(length) of its Content-Length")
        }
        try r.get()
    }

    /// Gives the body up: stops the PUT, and deletes the object. Also when the PUT failed: a
    /// store may keep what a cut-off PUT sent (SeaweedFS does, now and then), and may do so a
    /// moment after answering, so the key is deleted again a few seconds later; the sweep removes
    /// anything that still lands after that (it is referenced by no row).
    func abort() {
        condition.lock()
        aborted = true
        condition.broadcast()
        while result == nil { condition.wait() }
        let stored = (try? result!.get()) != nil
        condition.unlock()
        let key = S3Content.revisionKey(revisionId), client = client
        try? client.delete(key)
        if !stored { DispatchQueue.global().asyncAfter(deadline: .now() + 3) { try? client.delete(key) } }
    }
}
