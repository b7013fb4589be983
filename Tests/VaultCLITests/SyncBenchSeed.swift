import Foundation
import XCTest
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto

/// Not a check: `scripts/bench-sync.sh` runs this to seed an account with many nodes sealed for
/// one vault (names, node records and content records through the vault's own codec, as a device
/// would have pushed them), written as SQL for the server's database. Skipped without
/// `VAULT_BENCH_HOME` (the vault), `VAULT_BENCH_PASSWORD_FILE`, `VAULT_BENCH_OWNER` (the server's
/// user id) and `VAULT_BENCH_SQL` (where the SQL goes); `VAULT_BENCH_NODES` nodes (100000).
/// `VAULT_BENCH_LAYOUT=folders1000` (`scripts/bench-scale.sh`) lays them out as folders at the root
/// named `folder 0`, `folder 1`, … of 1,000 nodes each (the folder and 999 files; 1,000 folders of
/// 999 files at 1,000,000 nodes); otherwise 100 folders of 10 folders, the files spread over those.
final class SyncBenchSeed: XCTestCase {
    func testWriteSeedSQL() throws {
        let env = ProcessInfo.processInfo.environment
        guard let home = env["VAULT_BENCH_HOME"], let pwFile = env["VAULT_BENCH_PASSWORD_FILE"],
              let owner = env["VAULT_BENCH_OWNER"], let out = env["VAULT_BENCH_SQL"] else {
            throw XCTSkip("scripts/bench-sync.sh sets VAULT_BENCH_HOME, VAULT_BENCH_PASSWORD_FILE, VAULT_BENCH_OWNER and VAULT_BENCH_SQL")
        }
        let count = Int(env["VAULT_BENCH_NODES"] ?? "") ?? 100_000
        let layout = VaultLayout(root: home)
        let (file, _) = try Vault.readKeyslots(layout)
        var password = try String(contentsOfFile: pwFile, encoding: .utf8)
        while password.hasSuffix("\n") { password.removeLast() }
        let vault = try Vault.open(layout: layout, masterKey: try file.unlock(password: SecureBytes(copying: Array(password.utf8))))
        let codec = vault.remoteCodec

        let now = 1_700_000_000.0
        var sql = "BEGIN;\n"
        func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }
        func row(id: String, parent: String, name: String, folder: Bool, size: Int64, sha: String?, meta: String, contentMeta: String?) {
            sql += "INSERT INTO files(owner,id,parent_id,name,type,mime_type,size,version,sha256,created_at,modified_at,trashed,meta,content_meta) VALUES("
                + [q(owner), q(id), q(parent), q(name), q(folder ? "folder" : "file"), q(folder ? "application/x-folder" : "text/plain"),
                   "\(size)", "1", sha.map(q) ?? "NULL", "\(now)", "\(now)", "0", q(meta), contentMeta.map(q) ?? "NULL"].joined(separator: ",")
                + ");\n"
        }
        func node(_ id: String, _ parent: String, _ name: String, folder: Bool) throws -> (name: String, meta: String) {
            (try codec.nameToken(name, parentId: parent),
             try codec.sealNode(NodeRecord(device: "bench", mtime: Int64(now), name: name, parent: parent, seq: 1, isFolder: folder), nodeId: id))
        }
        let sha = String(repeating: "ab", count: 32)
        let plain: Int64 = 1000
        let sealed = Int64(BlobStore.sealedSize(plaintextSize: UInt64(plain)))
        var made = 0
        var k = 0
        func addFile(in parent: String) throws {
            let id = RemoteCodec.newId()
            let n = try node(id, parent, "file \(k).txt", folder: false)
            let c = try codec.sealContent(ContentRecord(blob: RemoteCodec.newId(), device: "bench", mime: "text/plain", mtime: Int64(now),
                                                        sealedSize: sealed, seq: 1, sha256: sha, size: plain), nodeId: id)
            row(id: id, parent: parent, name: n.name, folder: false, size: sealed, sha: nil, meta: n.meta, contentMeta: c)
            made += 1; k += 1
        }
        if env["VAULT_BENCH_LAYOUT"] == "folders1000" {
            // Folders of 1,000 nodes at the root: the folder, then its 999 files.
            var i = 0
            while made < count {
                let folder = RemoteCodec.newId()
                let f = try node(folder, "root", "folder \(i)", folder: true)
                row(id: folder, parent: "root", name: f.name, folder: true, size: 0, sha: nil, meta: f.meta, contentMeta: nil)
                made += 1; i += 1
                for _ in 0..<999 where made < count { try addFile(in: folder) }
            }
        } else {
            // 100 folders of 10 folders, the files spread over those 1,000 (about 99 each).
            var leaves: [String] = []
            for i in 0..<100 where made < count {
                let top = RemoteCodec.newId()
                let t = try node(top, "root", "folder \(i)", folder: true)
                row(id: top, parent: "root", name: t.name, folder: true, size: 0, sha: nil, meta: t.meta, contentMeta: nil)
                made += 1
                for j in 0..<10 where made < count {
                    let sub = RemoteCodec.newId()
                    let s = try node(sub, top, "part \(j)", folder: true)
                    row(id: sub, parent: top, name: s.name, folder: true, size: 0, sha: nil, meta: s.meta, contentMeta: nil)
                    leaves.append(sub)
                    made += 1
                }
            }
            while made < count { try addFile(in: leaves[k % leaves.count]) }
        }
        sql += "COMMIT;\n"
        try Data(sql.utf8).write(to: URL(fileURLWithPath: out))
        print("seeded \(made) nodes into \(out)")
    }
}
