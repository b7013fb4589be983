import Foundation
import VaultCore
import VaultCrypto
import VaultSync
import VaultTestSupport
import XCTest

/// The outbox against a model of the server's tree (issue 9 item 7b): seeded random sequences of
/// mkdir, put (new files and new versions), moves and renames of files and folders, rm and rm -r
/// over nested folders, offline, with syncs at random points; run in-process on VaultCore and the
/// sync layer against a real `vault-server`. After every sync the server's tree (names, types,
/// sizes and content SHA-256 per path, listed through its API) must equal the model and the
/// outbox be empty; a second sync must change nothing.
///
/// Scale with `VAULT_OUTBOX_SEEDS` (how many), `VAULT_OUTBOX_FIRST_SEED` and `VAULT_OUTBOX_OPS`
/// (per seed), or `scripts/outbox-model.sh N`. A failure prints the seed and the operations as one
/// line; `VAULT_OUTBOX_REPRO='<line>'` replays exactly that (`testReproduction`).
final class OutboxModelTests: XCTestCase {
    static let env = ProcessInfo.processInfo.environment

    func testRandomOperationSequencesMatchTheModel() throws {
        let count = Self.env["VAULT_OUTBOX_SEEDS"].flatMap(Int.init) ?? 30
        let first = Self.env["VAULT_OUTBOX_FIRST_SEED"].flatMap(UInt64.init) ?? 1
        let perSeed = Self.env["VAULT_OUTBOX_OPS"].flatMap(Int.init) ?? 40
        let run = try ModelRun()
        var ops = 0, syncs = 0, failures: [String] = []
        let start = Date()
        for seed in first..<(first + UInt64(count)) {
            let list = OpGenerator().generate(seed: seed, count: perSeed) + [.sync]
            ops += list.count; syncs += list.filter { $0 == .sync }.count
            if let failure = run.check(list) { failures.append("seed \(seed): \(failure)") }
        }
        let took = Date().timeIntervalSince(start)
        print("outbox model: \(count) seeds from \(first), \(ops) operations, \(syncs) syncs, \(failures.count) failing, \(String(format: "%.1f", took)) s")
        for f in failures.prefix(5) { XCTFail(f) }
        if failures.count > 5 { XCTFail("… and \(failures.count - 5) more failing seeds: " + failures.dropFirst(5).map { String($0.prefix { $0 != ":" }) }.joined(separator: ", ")) }
    }

    /// Replays `VAULT_OUTBOX_REPRO` (a line printed by a failure).
    func testReproduction() throws {
        guard let line = Self.env["VAULT_OUTBOX_REPRO"] else { throw XCTSkip("set VAULT_OUTBOX_REPRO to replay a failing line") }
        let ops = try XCTUnwrap(ModelOp.parse(line), "cannot parse the line")
        if let failure = try ModelRun().check(ops + [.sync]) { XCTFail(failure) }
    }

    /// The two sequences of the issue, and their neighbours, by hand.
    func testTheReportedSequences() throws {
        let run = try ModelRun()
        let cases = [
            // A folder created, a child moved out of it, the folder removed: the child's creation
            // must not refer to the removed folder.
            "mkdir /C; mkdir /C/A; mv /C/A /A; rm-r /C; sync",
            // A file on the server moved into a folder that is then removed: it must go too.
            "put /e.dat 1:10; sync; mkdir /C; mv /e.dat /C/e.dat; rm-r /C; sync; put /e.dat 2:20",
            "put /e.dat 1:10; mkdir /C; sync; mv /e.dat /C/e.dat; rm-r /C; sync; put /e.dat 2:20",
            // Moved out of a synced folder before it is removed: moved out on the server first.
            "mkdir /C; put /C/x 3:30; sync; mv /C/x /x; rm-r /C",
            // A new version, renamed, then removed; a name reused at once.
            "put /f.txt 4:40; sync; replace /f.txt 5:50; mv /f.txt /g; rm /g; put /g 6:60",
            // Swaps through a third name, nested moves of folders with content.
            "put /e.dat 7:1; put /f.txt 8:2; sync; mv /e.dat /g; mv /f.txt /e.dat; mv /g /f.txt",
            "mkdir /A; mkdir /A/B; put /A/B/g 9:9; sync; mv /A/B /B; mv /A /B/A; rm-r /B/A; mv /B /A",
            "mkdir /A; mkdir /B; mv /B /A/B; put /A/B/h.bin 10:0; mv /A/B /B; rm-r /A; replace /B/h.bin 11:11",
        ]
        for c in cases {
            let ops = try XCTUnwrap(ModelOp.parse(c), c)
            if let failure = run.check(ops + [.sync]) { XCTFail("\(c): \(failure)") }
        }
    }
}

/// One server for many runs; each run a fresh vault, the server's tree emptied first.
final class ModelRun {
    let root: URL
    let server: ServerHarness
    let tree: ServerTree
    /// The vault's key envelope, once the first run made the vault.
    var envelope: [UInt8]?

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("vault-model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        server = try ServerHarness(root: root)
        tree = try ServerTree(server)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// Applies `ops` to a new vault and the model, syncing where they say; nil when every check
    /// held, else what failed and the one-line reproduction.
    func check(_ ops: [ModelOp]) -> String? {
        var done: [ModelOp] = []
        do {
            try tree.clear()
            let dir = root.appendingPathComponent(UUID().uuidString)
            let layout = VaultLayout(root: dir.appendingPathComponent("v").path)
            let password = SecureBytes(copying: Array("model password".utf8))
            // One vault for the account (its key envelope is on the server): the first run makes
            // it, each later one joins it as a fresh device (an empty tree, as the server's now is).
            let vault: Vault
            if let envelope {
                vault = try Vault.join(layout: layout, envelope: envelope, masterKey: try KeyslotFile.parse(envelope).unlock(password: password))
            } else {
                vault = try Vault.create(layout: layout, password: password,
                                         kdf: .argon2id(opsLimit: 1, memLimitBytes: 8 << 20, salt: SecureRandom.bytes(16)))
                envelope = try vault.envelopeBytes()
            }
            server.decoder = ServerDecoder(home: dir.appendingPathComponent("v"), password: "model password")
            defer { try? FileManager.default.removeItem(at: dir) }
            let client = try SyncClient.login(vault: vault, serverURL: server.url, user: server.user,
                                              password: SecureBytes(copying: Array(server.password.utf8)), caFile: nil,
                                              policy: .none)
            var model = TreeModel()
            for op in ops {
                done.append(op)
                try model.apply(op)
                if op == .sync {
                    try sync(client, vault, model, label: "sync")
                } else {
                    try apply(op, to: vault, scratch: dir)
                }
            }
            try sync(client, vault, model, label: "final sync")
            // Idempotent: a second sync changes nothing.
            let before = try tree.tree()
            let again = try client.push()
            guard again.done == 0, try tree.tree() == before else {
                return "a second sync changed something (\(again.done) change(s)): \(again.messages)\n  reproduce: \(ModelOp.line(done))"
            }
            let doctor = try vault.doctor()
            guard doctor.healthy else { return "doctor: \(doctor.problems)\n  reproduce: \(ModelOp.line(done))" }
            return nil
        } catch {
            return "after `\(done.last.map(\.description) ?? "start")`: \(error)\n  reproduce: VAULT_OUTBOX_REPRO='\(ModelOp.line(done))'"
        }
    }

    private func sync(_ client: SyncClient, _ vault: Vault, _ model: TreeModel, label: String) throws {
        let s = try client.push()
        guard s.conflicts == 0, s.failed == 0, s.skipped == 0, s.held == 0 else {
            throw TransferTestError("\(label): \(s.conflicts) conflict(s), \(s.failed) failed, \(s.skipped) waiting: \(s.messages)")
        }
        let left = try vault.outboxCounts()
        guard left.total == 0 else { throw TransferTestError("\(label): \(left.total) outbox entries left: \(try vault.outbox())") }
        let diff = ServerTree.differences(try tree.tree(), ServerTree.expected(model))
        guard diff.isEmpty else { throw TransferTestError("\(label): the server differs from the model:\n    " + diff.joined(separator: "\n    ")) }
    }

    private func apply(_ op: ModelOp, to vault: Vault, scratch: URL) throws {
        func local(_ c: ModelContent) throws -> String {
            let url = scratch.appendingPathComponent("content-\(c.seed)-\(c.size)")
            try Data(c.bytes()).write(to: url)
            return url.path
        }
        switch op {
        case .mkdir(let p): try vault.mkdir(p)
        case let .put(p, c): try vault.put(localFile: try local(c), to: p)
        case let .replace(p, c): try vault.put(localFile: try local(c), to: p, replace: true)
        case let .move(a, b): try vault.move(a, to: b)
        case .remove(let p): try vault.remove(p)
        case .removeRecursive(let p): try vault.remove(p, recursive: true)
        case .sync: break
        }
    }
}
