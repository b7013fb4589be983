import Foundation
import VaultPrimitives

/// Writes one chunk (or the rest of a cut-off one) to its staging (`ContentBackend.openChunk`:
/// in place into the part file, or a file of its own uploaded as an S3 part), then records it;
/// a body cut off midway keeps its durable prefix for the next try. Every write and
/// the recording happen only while the sink's claim is still its own (`ChunkClaims.whileOwned`):
/// once a new request took a stalled chunk over, this sink writes, keeps and records nothing.
final class ChunkSink: BodySink {
    let service: VaultService
    let owner: String, uploadId: String
    let index: Int
    /// Absolute file offset of the first body byte, and how far into the chunk that is.
    let offset: Int64, skip: Int64
    /// Body bytes expected (the chunk's length minus `skip`).
    let length: Int64
    /// The claim and the chunk's staging; nil for a repeat of a recorded chunk (nothing is written).
    var writer: (ticket: ChunkClaims.Ticket, file: ChunkStaging)?
    var written: Int64 = 0

    init(service: VaultService, owner: String, uploadId: String, index: Int, offset: Int64, skip: Int64, length: Int64,
         writer: (ChunkClaims.Ticket, ChunkStaging)?) {
        self.service = service; self.owner = owner; self.uploadId = uploadId; self.index = index
        self.offset = offset; self.skip = skip; self.length = length; self.writer = writer
    }

    static let superseded = APIError.conflict(
        "another request for this chunk took it over after this one made no progress; nothing more of this body was kept",
        code: .chunkSuperseded)

    func receive(_ bytes: UnsafeRawBufferPointer) throws {
        guard written + Int64(bytes.count) <= length else {
            throw APIError.badRequest("the chunk body is longer than its Content-Range", code: .wrongChunkSize)
        }
        if let (ticket, file) = writer {
            let at = offset + written
            guard try service.chunkClaims.whileOwned(ticket, { try file.write(bytes, at: at) }) != nil else {
                throw Self.superseded
            }
        }
        written += Int64(bytes.count)
    }

    func finish() -> HTTPResponse {
        defer { release() }
        guard written == length else {
            keepWritten()
            _ = service.chunkDone(owner: owner, uploadId: uploadId, index: index, written: written, record: false)
            return .error(.badRequest("the chunk body has \(written) bytes, the Content-Range says \(length)",
                                      code: .wrongChunkSize))
        }
        guard let (ticket, file) = writer else {
            return service.chunkDone(owner: owner, uploadId: uploadId, index: index, written: written, record: false)
        }
        let response = service.chunkClaims.whileOwned(ticket) { () -> HTTPResponse in
            let tag: String?
            do { tag = try file.commit() } catch { return .error(.unexpected(error)) }
            return service.chunkDone(owner: owner, uploadId: uploadId, index: index, written: written, record: true, tag: tag)
        }
        return response ?? .error(Self.superseded)
    }

    func abort() {
        // The whole body arrived and only the answer was lost (the client went away before the
        // request ended): record the chunk as `finish` would, or a session whose every byte is
        // here would never be published (its ranges complete, nothing left for the client to send).
        if writer != nil, written == length, length > 0 {
            _ = finish()
            return
        }
        keepWritten()
        release()
        if written > 0 {
            _ = try? service.store.write(.owner(owner)) { db in
                try db.addUploadBytesReceived(uploadId, written)
            }
        }
    }

    /// Makes what this body wrote durable and keeps it as the chunk's received prefix (if still ours).
    private func keepWritten() {
        guard let (ticket, file) = writer, written > 0 else { return }
        _ = service.chunkClaims.whileOwned(ticket) {
            guard (try? file.keep(prefix: skip + written)) != nil else { return }
            service.keepPartial(owner: owner, uploadId: uploadId, index: index, upTo: skip + written)
        }
    }

    private func release() {
        if let (ticket, file) = writer {
            file.close()
            service.chunkClaims.release(ticket)
        }
        writer = nil
    }
}
