import Foundation
import XCTest
import VaultAPI
@testable import VaultServer
@testable import VaultCore
@testable import VaultSync

/// The I/O side of uploads and downloads against the reference server: retries with backoff, a
/// transfer that gives up and resumes later where the server (or the sealed partial) stopped.
final class TransferRetryTests: SyncTestCase {
    /// Two 429s with `Retry-After` are waited out; the upload then goes through.
    func testAPushWaitsOutTooManyRequestsAndUploads() throws {
        let (n, _) = try put("a.bin", size: 100_000)
        server.faults(FaultSettings(retryAfter429Count: 2, retryAfterSeconds: 0))
        let summary = try client().push(concurrency: 1)
        XCTAssertEqual(summary.done, 1)
        XCTAssertEqual(heard.filter { $0.contains("429") }.count, 2, "\(heard)")
        XCTAssertNotNil(try vault.node(id: n.id)?.remoteId)
    }

    /// Connections the server drops part-way through a chunk are retried within the same push,
    /// and what arrived is the file (downloaded back after an eviction).
    func testDroppedConnectionsMidChunkAreRetriedWithinOnePush() throws {
        let (n, bytes) = try put("b.bin", size: 300_000)
        // Two drops armed: a request with a short body (opening the session) uses one up without
        // being cut; chunks are cut at 30,000 bytes.
        server.faults(FaultSettings(dropAfterBytes: 30_000, dropCount: 2))
        let c = try client()
        XCTAssertEqual(try c.push(concurrency: 1).done, 1)
        XCTAssertGreaterThanOrEqual(heard.filter { $0.contains("retrying") }.count, 1, "\(heard)")
        _ = try vault.evict(paths: ["/b.bin"])
        let back = try c.ensureLocal(try XCTUnwrap(try vault.node(id: n.id)))
        XCTAssertEqual(try content(back), bytes)
    }

    /// An upload cut off after a few chunks gives up (one attempt allowed), leaves its transfer
    /// waiting with the server's session, and the next push sends only what the server lacks.
    func testAGivenUpUploadResumesWhereTheServerStopped() throws {
        let size = 600_000
        let (n, _) = try put("c.bin", size: size)
        proxy.cut(after: 330_000, .toServer)
        XCTAssertThrowsError(try client(maxAttempts: 1).push(concurrency: 1)) { error in
            XCTAssertTrue((error as? VaultError)?.message.contains("stopped after 1 failed attempts") == true, "\(error)")
        }
        let row = try XCTUnwrap(try vault.transfers().first { $0.direction == .upload })
        XCTAssertEqual(row.state, .waitingToRetry)
        let id = try XCTUnwrap(row.uploadId)
        let c = try client()
        let held = try bytesReceived(id, c)
        XCTAssertGreaterThanOrEqual(held, 4 * Self.chunk, "the chunks before the cut were kept")

        let before = proxy.forwarded(.toServer)
        XCTAssertEqual(try c.push(concurrency: 1).done, 1)
        let sent = proxy.forwarded(.toServer) - before
        XCTAssertLessThan(sent, Int(row.bytesTotal) - held + Self.chunk, "only the missing chunks were sent again")
        XCTAssertLessThanOrEqual(try bytesReceived(id, c), Int(row.bytesTotal) + Self.chunk)
        XCTAssertNotNil(try vault.node(id: n.id)?.remoteId)
    }

    /// A download whose connection is cut part-way goes on from the byte it reached.
    func testACutDownloadIsRetriedFromTheByteItReached() throws {
        let (node, bytes) = try remoteOnly("d.bin", size: 500_000)
        let c = try client()
        proxy.cut(after: 200_000, .toClient)
        let before = proxy.forwarded(.toClient)
        let local = try c.ensureLocal(node)
        XCTAssertEqual(local.contentState, .local)
        XCTAssertEqual(try content(local), bytes)
        XCTAssertTrue(heard.contains { $0.contains("retrying") }, "\(heard)")
        XCTAssertLessThan(proxy.forwarded(.toClient) - before, bytes.count + 100_000, "the cut-off part was not fetched again")
    }

    /// A download that gave up keeps its sealed partial; the next command resumes from it.
    func testAnInterruptedDownloadResumesFromItsPartialInTheNextCommand() throws {
        let (node, bytes) = try remoteOnly("e.bin", size: 500_000)
        proxy.cut(after: 300_000, .toClient)
        XCTAssertThrowsError(try client(maxAttempts: 1).ensureLocal(node))
        XCTAssertEqual(try vault.node(id: node.id)?.contentState, .notDownloaded, "nothing published")

        let before = proxy.forwarded(.toClient)
        let local = try client().ensureLocal(try XCTUnwrap(try vault.node(id: node.id)))
        XCTAssertEqual(try content(local), bytes)
        XCTAssertTrue(heard.contains { $0.contains("resuming the download at") }, "\(heard)")
        XCTAssertLessThan(proxy.forwarded(.toClient) - before, bytes.count - 200_000, "only the rest was fetched")
    }

    /// A transfer's row is written only when it changes (each write is a durable transaction):
    /// a small upload's row is written at its start, its session, its progress and its end,
    /// the last progress and the end in one write; what it holds at each step is as before.
    func testATransferRowIsWrittenOnlyWhenItChanges() throws {
        let (n, _) = try put("w.bin", size: 10)
        func writes() throws -> Int { try vault.db.scalar(Int.self, "SELECT total_changes()") ?? -1 }
        func row() throws -> TransferRow { try XCTUnwrap(try vault.uploadTransfer(requestId: "req-w")) }
        var before = try writes()
        let r = try TransferRecord.upload(in: vault, nodeId: n.id, requestId: "req-w", blobId: try XCTUnwrap(n.localPath), total: 10)
        XCTAssertEqual(try writes() - before, 1, "the row, inserted running")
        XCTAssertEqual(try row().state, .running)
        before = try writes()
        r.set(.running)
        r.progress(0, force: true)
        XCTAssertEqual(try writes() - before, 0, "nothing changed: nothing written")
        r.setSession(uploadId: "u-1", url: "/v1/upload/u-1/chunk")
        r.progress(6)
        XCTAssertEqual(try writes() - before, 2)
        XCTAssertEqual(try row().bytesDone, 6)
        var seen: [Int64] = []
        r.observer = { seen.append($0) }
        before = try writes()
        r.end(.done, bytes: 10)
        XCTAssertEqual(try writes() - before, 1, "the last progress and the end in one write")
        XCTAssertEqual(try row().state, .done)
        XCTAssertEqual(try row().bytesDone, 10)
        XCTAssertEqual(seen, [10], "the last progress is shown")
        // Taken up again (another run): its row as stored is what it compares with.
        before = try writes()
        let again = try TransferRecord.upload(in: vault, nodeId: n.id, requestId: "req-w", blobId: try XCTUnwrap(n.localPath), total: 10)
        again.set(.done)
        XCTAssertEqual(try writes() - before, 0)
        again.set(.failed, error: "refused")
        again.set(.failed, error: "refused")
        again.set(.failed, error: "refused again")
        XCTAssertEqual(try writes() - before, 2, "a new reason is a change")
        XCTAssertEqual(try row().error, "refused again")
    }
}
