import Foundation
import XCTest
import VaultTestSupport
@testable import VaultCore
@testable import VaultKeys

/// Issue 11, "What must hold": everything that leaves the device is ciphertext. Real `vault` and
/// `vault-server` binaries; every request goes through a wire tap; afterwards no marker of any
/// name or content is anywhere under the server's data folder, in its access log, or on the wire,
/// and the independent decoder (scripts/independent-decrypt-server.py, written from SECURITY.md)
/// reads every name and content back byte for byte.
final class EndToEndTests: XCTestCase {
    var h: CLIHarness!
    var server: ServerHarness!
    var tap: WireTap!

    override func tearDown() {
        tap = nil; server = nil; h = nil
    }

    static var repoRoot: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }

    func start(settings: String? = nil) throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
        h.useFastRetry()
        if let settings {
            let config = h.home.appendingPathComponent("config")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            try Data(settings.utf8).write(to: config.appendingPathComponent("settings.json"))
        }
        server = try ServerHarness(root: h.root)
        tap = try WireTap(targetPort: server.port, log: h.root.appendingPathComponent("wire.log"))
        try h.ok(["login", "--server", tap.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + h.pw)
    }

    func marker(_ what: String) -> String { "MKR\(what)-\(UUID().uuidString)" }

    func testNoNameOrContentReachesTheServerTheLogOrTheWireAndTheIndependentDecoderReadsItAll() throws {
        try start()
        let dir = marker("DIR"), dir2 = marker("DIR2"), nameA = marker("NAMEA") + ".txt", nameB = marker("NAMEB") + ".bin"
        let renamed = marker("RENAMED") + ".bin", unicode = "Grüße – " + marker("UNI") + " ✓.txt"
        let dataA = marker("DATAA"), dataB = marker("DATAB"), dataA2 = marker("DATAA2"), dataU = marker("DATAU")
        let contentA1 = Data(String(repeating: dataA + "\n", count: 4000).utf8)            // ~170 KB: three segments
        let contentB = Data(dataB.utf8), contentA2 = Data((dataA2 + "\n").utf8), contentU = Data(dataU.utf8)
        try h.ok(["mkdir", "/" + dir] + h.pw)
        try h.ok(["put", try h.localFile("a", contentA1), "/\(dir)/\(nameA)"] + h.pw)
        try h.ok(["put", try h.localFile("b", contentB), "/" + nameB] + h.pw)
        try h.ok(["put", try h.localFile("u", contentU), "/\(dir)/\(unicode)"] + h.pw)
        try h.ok(["sync"] + h.pw)
        // Move, rename and a new revision.
        try h.ok(["mkdir", "/" + dir2] + h.pw)
        try h.ok(["mv", "/" + nameB, "/\(dir2)/\(renamed)"] + h.pw)
        try h.ok(["put", "--replace", try h.localFile("a2", contentA2), "/\(dir)/\(nameA)"] + h.pw)
        try h.ok(["sync"] + h.pw)
        // A restore of A's first revision, as another device would send it (the server API, with
        // a new content record sealed by this vault's codec).
        let folder = try XCTUnwrap(try server.children()[dir]?["id"] as? String)
        let a = try XCTUnwrap(try server.children(folder)[nameA])
        let aId = try XCTUnwrap(a["id"] as? String)
        let revisions = try server.curl("GET", "/v1/files/\(aId)/revisions").json["revisions"] as? [[String: Any]] ?? []
        XCTAssertEqual(revisions.count, 2)
        let first = try XCTUnwrap(revisions.last)
        let codec = try h.decoder.codec()
        var record = try codec.openContent(try XCTUnwrap(first["contentMeta"] as? String), nodeId: aId)
        record.seq = 3
        let body = try JSONSerialization.data(withJSONObject: ["contentMeta": try codec.sealContent(record, nodeId: aId)])
        let restored = try server.curl("POST", "/v1/files/\(aId)/revisions/\(first["id"] as! String)/restore",
                                       json: String(decoding: body, as: UTF8.self), headers: ["If-Match": "\"\(a["version"] as! Int)\""])
        XCTAssertEqual(restored.status, 200, String(decoding: restored.body, as: UTF8.self))
        XCTAssertEqual(try server.children(folder)[nameA]?["sha256"] as? String, sha256Hex(contentA1), "the restored head")

        // Nothing in the clear: what the server stores, its access logs, the wire.
        let stored = try server.storedFolders(), log = Data(server.log.utf8)
        let markers = [dir, dir2, nameA, nameB, renamed, unicode, "Grüße", dataA, dataB, dataA2, dataU]
            + [dir, nameA, renamed].map { String($0.prefix(20)) }
        XCTAssertFalse(tap.bytes.isEmpty)
        XCTAssertNotNil(tap.bytes.range(of: Data("PUT /v1/upload/".utf8)), "the tap saw the uploads")
        for m in markers {
            for folder in stored { XCTAssertEqual(filesContaining(m, under: folder), [], "\(m) in what the server stores") }
            XCTAssertNil(log.range(of: Data(m.utf8)), "\(m) in the access log")
            XCTAssertNil(tap.bytes.range(of: Data(m.utf8)), "\(m) on the wire")
        }
        XCTAssertNil(tap.bytes.range(of: Data(CLIHarness.password.utf8)), "the vault password on the wire")
        // What the server does see: tokens, records and sealed bytes of the right sizes.
        let b = try XCTUnwrap(try server.children(try XCTUnwrap(try server.children()[dir2]?["id"] as? String))[renamed])
        XCTAssertEqual(b["mimeType"] as? String, "application/octet-stream")
        XCTAssertEqual(b["storedSize"] as? Int, Int(BlobStore.sealedSize(plaintextSize: UInt64(contentB.count))))

        // The independent decoder reads it all back, revisions included.
        let out = h.root.appendingPathComponent("decoded")
        let r = try runDecoder(out: out)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("\(dir)/\(nameA)")), contentA1)
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("\(dir)/\(unicode)")), contentU)
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("\(dir2)/\(renamed)")), contentB)
        let revs = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent(dir).path).filter { $0.hasPrefix(nameA + "@") }
        let revContents = Set(try revs.map { try Data(contentsOf: out.appendingPathComponent("\(dir)/\($0)")) })
        XCTAssertEqual(revContents, [contentA1, contentA2], "every revision decrypts")
    }

    /// `remotePadding: padme`: every upload is its Padmé size on the server (the blob, then
    /// zeros), downloads read only the sealed bytes, and content round-trips.
    func testPaddingSendsPadmeSizesAndContentRoundTrips() throws {
        try start(settings: #"{"remotePadding": "padme"}"#)
        var originals: [String: Data] = [:]
        for (i, size) in [0, 1, 1000, 65_536, 200_001, 1 << 20].enumerated() {
            let data = TestData.data(size, for: self.name)
            originals["f\(i).bin"] = data
            try h.ok(["put", try h.localFile("f\(i)", data), "/f\(i).bin"] + h.pw)
        }
        try h.ok(["sync"] + h.pw)
        for (name, data) in originals {
            let f = try XCTUnwrap(try server.children()[name])
            let sealed = BlobStore.sealedSize(plaintextSize: UInt64(data.count))
            XCTAssertEqual(f["storedSize"] as? Int, Int(RemotePadding.padme(sealed)), name)
            XCTAssertEqual(f["sealedSize"] as? Int, Int(sealed), name)
            XCTAssertEqual(try server.contentSHA256(f["id"] as! String), sha256Hex(data), "\(name): the padded bytes decode")
        }
        try h.ok(["evict"] + originals.keys.map { "/" + $0 } + h.pw)
        for (name, data) in originals { XCTAssertEqual(try h.ok(["cat", "/" + name] + h.pw).stdout, data, name) }
        let wire = tap.bytes
        XCTAssertNil(wire.range(of: Data("Range: bytes=0-\(RemotePadding.padme(BlobStore.sealedSize(plaintextSize: 1 << 20)) - 1)".utf8)),
                     "downloads never ask for the padding")
        let out = h.root.appendingPathComponent("decoded")
        let r = try runDecoder(out: out)
        XCTAssertEqual(r.status, 0, r.output)
        for (name, data) in originals { XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent(name)), data, name) }
    }

    /// Runs scripts/independent-decrypt-server.py on the server's data folder (of a deployment:
    /// a copy of its stores in the embedded form, `ServerHarness.embeddedCopy`).
    func runDecoder(out: URL) throws -> (status: Int32, output: String) {
        guard (try? runTool("/usr/bin/env", ["python3", "-c", "import cryptography, argon2"])) == 0 else {
            throw XCTSkip("python3 with cryptography and argon2-cffi is needed (scripts/check-independent-decrypt.sh installs them)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", Self.repoRoot.appendingPathComponent("scripts/independent-decrypt-server.py").path, try server.embeddedCopy().path,
                       "--user", server.user, "--password-file", h.passwordFile.path, "--out", out.path, "--revisions"]
        let pipe = Pipe()
        p.standardOutput = pipe; p.standardError = pipe
        try p.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }
}
