import Foundation
import XCTest
import VaultCore
import VaultCrypto

/// The end-to-end seam: tokens and records round-trip, and every way a server can move, swap,
/// forge or alter what it stores about a node is an integrity error (SECURITY.md "End to end").
final class RemoteCodecTests: VaultTestCase {
    var codec: RemoteCodec!
    let device = "device-a"

    override func setUpWithError() throws {
        try super.setUpWithError()
        codec = vault.remoteCodec
    }

    func entry(id: String, parent: String, name: String, folder: Bool = false, seq: Int64 = 1,
               content: ContentRecord? = nil) throws -> SealedRemoteEntry {
        let meta = try codec.sealNode(NodeRecord(device: device, mtime: 1_700_000_000, name: name, parent: parent, seq: seq, isFolder: folder), nodeId: id)
        return SealedRemoteEntry(id: id, parentId: parent, name: try codec.nameToken(name, parentId: parent), isFolder: folder,
                                 size: content?.sealedSize ?? 0, version: 1, trashed: false, meta: meta,
                                 contentMeta: try content.map { try codec.sealContent($0, nodeId: id) })
    }

    func content(size: Int64 = 5) -> ContentRecord {
        ContentRecord(blob: RemoteCodec.newId(), device: device, mime: "text/plain", mtime: 1, sealedSize: 112 + size + 16,
                      seq: 1, sha256: String(repeating: "ab", count: 32), size: size)
    }

    func assertLie(_ e: SealedRemoteEntry, _ why: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try codec.open(e), why, file: file, line: line) { error in
            XCTAssertEqual((error as? VaultError)?.kind, .integrity, "\(why): \(error)", file: file, line: line)
        }
    }

    func testRoundTripAndDeterministicNames() throws {
        let folder = RemoteCodec.newId(), fileId = RemoteCodec.newId()
        let f = try entry(id: folder, parent: "root", name: "Reports", folder: true)
        let opened = try codec.open(f)
        XCTAssertEqual(opened.name, "Reports"); XCTAssertTrue(opened.isFolder); XCTAssertEqual(opened.parentId, "root")
        let c = content()
        let e = try entry(id: fileId, parent: folder, name: "q3 — résumé.pdf", content: c)
        XCTAssertEqual(try codec.open(e).content, c)
        XCTAssertEqual(try codec.open(e).name, "q3 — résumé.pdf")
        // Same name, same folder: same token (the server's uniqueness still works); other folder: another.
        XCTAssertEqual(try codec.nameToken("a.txt", parentId: folder), try codec.nameToken("a.txt", parentId: folder))
        XCTAssertNotEqual(try codec.nameToken("a.txt", parentId: folder), try codec.nameToken("a.txt", parentId: "root"))
        // Names are not normalised: the NFD and NFC spellings of one name are two names, two tokens.
        XCTAssertNotEqual(try codec.nameToken("e\u{301}.txt", parentId: folder), try codec.nameToken("\u{e9}.txt", parentId: folder))
        var nfd = try entry(id: RemoteCodec.newId(), parent: folder, name: "e\u{301}.txt", folder: true)
        XCTAssertEqual(Array(try codec.open(nfd).name.utf8), Array("e\u{301}.txt".utf8))
        nfd.name = try codec.nameToken("\u{e9}.txt", parentId: folder)
        assertLie(nfd, "a token of another spelling than the record")
        // (Whole names: a short marker may turn up in base64 by chance.)
        XCTAssertFalse(e.name.contains("q3 — résumé"))
        XCTAssertFalse(e.meta!.contains("q3 — résumé"))
    }

    func testEveryServerLieIsAnIntegrityError() throws {
        let a = RemoteCodec.newId(), b = RemoteCodec.newId(), folder = RemoteCodec.newId()
        let ea = try entry(id: a, parent: "root", name: "a.txt", content: content())
        let eb = try entry(id: b, parent: "root", name: "b.txt", content: content(size: 9))
        _ = try codec.open(ea); _ = try codec.open(eb)

        var x = ea; x.name = eb.name; assertLie(x, "name swapped with a sibling's")
        x = ea; x.meta = eb.meta; assertLie(x, "record swapped")
        x = ea; x.contentMeta = eb.contentMeta; assertLie(x, "content record swapped")
        x = ea; x.parentId = folder; assertLie(x, "moved into another folder")
        x = ea; x.isFolder = true; assertLie(x, "type changed")
        x = ea; x.size = ea.size - 1; assertLie(x, "truncated on the server")
        x = ea; x.meta = nil; XCTAssertThrowsError(try codec.open(x), "plaintext account")
        x = ea; x.contentMeta = nil; assertLie(x, "file without content record")
        x = ea; x.id = "not-an-id"; assertLie(x, "invalid id")
        x = ea; x.id = RemoteCodec.newId(); assertLie(x, "record replayed under another id (injection)")
        // Flipped characters anywhere in the token and the records.
        for field in [\SealedRemoteEntry.name] {
            var t = Array(ea[keyPath: field].utf8)
            t[t.count - 3] = t[t.count - 3] == 65 ? 66 : 65
            x = ea; x[keyPath: field] = String(decoding: t, as: UTF8.self); assertLie(x, "flipped token")
        }
        for field in [\SealedRemoteEntry.meta, \SealedRemoteEntry.contentMeta] {
            var t = Array(ea[keyPath: field]!.utf8)
            t[t.count - 3] = t[t.count - 3] == 65 ? 66 : 65
            x = ea; x[keyPath: field] = String(decoding: t, as: UTF8.self); assertLie(x, "flipped record")
            x = ea; x[keyPath: field] = "99." + ea[keyPath: field]!.split(separator: ".")[1]; assertLie(x, "unknown future epoch")
        }
    }

    func testAnotherVaultsRecordsDoNotOpen() throws {
        let other = try Vault.create(layout: VaultLayout(root: dir.appendingPathComponent("other").path), password: password,
                                     kdf: .argon2id(opsLimit: 1, memLimitBytes: 8 << 20, salt: SecureRandom.bytes(16)))
        let foreign = other.remoteCodec
        let id = RemoteCodec.newId()
        let meta = try foreign.sealNode(NodeRecord(device: "x", mtime: 1, name: "n", parent: "root", seq: 1, isFolder: true), nodeId: id)
        let e = SealedRemoteEntry(id: id, parentId: "root", name: try foreign.nameToken("n", parentId: "root"), isFolder: true,
                                  size: 0, version: 1, trashed: false, meta: meta, contentMeta: nil)
        assertLie(e, "another account's node")
    }

    func testOlderEpochsOpenThroughTheKeyHistoryAfterRotation() throws {
        let id = RemoteCodec.newId()
        let before = try entry(id: id, parent: "root", name: "old.txt", content: content())
        XCTAssertTrue(before.name.hasPrefix("1."))
        _ = try vault.rotate(password: password)
        _ = try vault.rotate(password: password)
        let codec3 = vault.remoteCodec
        XCTAssertEqual(codec3.epoch, 3)
        XCTAssertEqual(try codec3.open(before).name, "old.txt", "epoch 1 still opens from epoch 3")
        XCTAssertTrue(try codec3.nameToken("new.txt", parentId: "root").hasPrefix("3."))
        XCTAssertEqual(vault.keyslots.body.history?.map(\.epoch).sorted(), [1, 2])
        XCTAssertEqual(vault.keyslots.body.generation, 3)
    }

    func testSealedNodeFieldsOpenAndSayWhatWasSealed() throws {
        let id = RemoteCodec.newId(), folder = RemoteCodec.newId()
        let sealed = try codec.sealNode(nodeId: id, name: "e\u{301}té.txt", parentId: folder, isFolder: false, seq: 7,
                                        device: device, deviceName: "laptop", mtime: 42)
        let c = content()
        let e = SealedRemoteEntry(id: id, parentId: folder, name: sealed.name, isFolder: false, size: c.sealedSize, version: 3,
                                  trashed: false, meta: sealed.meta, contentMeta: try codec.sealContent(c, nodeId: id))
        let n = try codec.open(e)
        XCTAssertEqual(Array(n.name.utf8), Array("e\u{301}té.txt".utf8), "sealed as given (names are not normalised)")
        XCTAssertEqual(n.record?.seq, 7); XCTAssertEqual(n.record?.parent, folder); XCTAssertEqual(n.content, c)
        XCTAssertEqual(n.record?.deviceName, "laptop", "the device name travels sealed in the record")
        XCTAssertEqual(sealed.name, try codec.nameToken("e\u{301}té.txt", parentId: folder))
        var x = e; x.parentId = "root"; assertLie(x, "the same fields under another folder")
    }

    /// Padmé (PURBs): at most about 12 % more, never less, and the known values.
    func testPadme() {
        XCTAssertEqual(RemotePadding.padme(0), 0); XCTAssertEqual(RemotePadding.padme(1), 1)
        XCTAssertEqual(RemotePadding.padme(9), 10)
        XCTAssertEqual(RemotePadding.padme(1000), 1024)
        XCTAssertEqual(RemotePadding.padme(65664), 67584)
        XCTAssertEqual(RemotePadding.padme(1 << 20), 1 << 20)
        for l in stride(from: UInt64(2), to: 1 << 40, by: 999_999_937) {
            let p = RemotePadding.padme(l)
            XCTAssertGreaterThanOrEqual(p, l)
            XCTAssertLessThanOrEqual(Double(p - l) / Double(l), 0.12 + 1e-9, "\(l)")
            XCTAssertEqual(RemotePadding.padme(p), p, "a Padmé size is its own class")
        }
        XCTAssertEqual(RemotePadding.none.uploadLength(sealedSize: 1000), 1000)
        XCTAssertEqual(RemotePadding.padme.uploadLength(sealedSize: 1000), 1024)
    }

    /// The server stores the sealed size or its Padmé size; anything else, and a record whose
    /// sealed size does not fit its plaintext, is a lie.
    func testStoredSizeIsTheSealedSizeOrItsPadmeSize() throws {
        let id = RemoteCodec.newId()
        let c = ContentRecord(blob: RemoteCodec.newId(), device: device, mime: "x", mtime: 1,
                              sealedSize: Int64(BlobStore.sealedSize(plaintextSize: 70_000)), seq: 1,
                              sha256: String(repeating: "ab", count: 32), size: 70_000)
        var e = try entry(id: id, parent: "root", name: "p.bin", content: c)
        XCTAssertNoThrow(try codec.open(e))
        e.size = Int64(RemotePadding.padme(UInt64(c.sealedSize))); XCTAssertNoThrow(try codec.open(e), "padded")
        e.size += 1; assertLie(e, "bigger than its padded size")
        e.size = c.sealedSize + 1; assertLie(e, "neither sealed nor padded")
        var wrong = c; wrong.sealedSize += 16
        assertLie(try entry(id: id, parent: "root", name: "p.bin", content: wrong), "a sealed size that does not fit the plaintext")
    }
}
