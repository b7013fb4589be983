import Foundation
import VaultSQL
import VaultPrimitives

/// `vault-server export` and `import`: a whole store — metadata, content files and the token
/// signing key — in one folder (a bundle), so a deployment moves between the embedded store
/// (SQLite + folder) and PostgreSQL without its users noticing: accounts, tokens, files,
/// revisions, upload sessions, key envelopes and change-feed cursors carry over. Run both with
/// the servers stopped; the export also holds the store's write lock while it reads.
///
/// Cursors: moving to PostgreSQL (or between two stores of one engine) keeps every change's
/// number and continues above the highest cursor any client may hold, so each client's next
/// pull reads only what is new. Moving from PostgreSQL to SQLite cannot keep them (each owner
/// numbers its own feed; SQLite numbers one feed for all): the changes are renumbered above every
/// old cursor and the old cursors expire, so each client lists its tree once (410, then a listing).
enum StoreMove {
    /// The bundle's format (`manifest.json`).
    static let format = 1

    /// `BUNDLE/manifest.json`, written last: a bundle without one is incomplete.
    struct Manifest: Codable, Equatable {
        var format: Int
        /// The engine exported from (`SQLite`, `PostgreSQL`).
        var engine: String
        /// The highest cursor a client of the exported store may hold.
        var cursorHighWater: Int64
        /// Rows per table.
        var rows: [String: Int]
        /// Unfinished upload sessions the move left behind (not in the bundle, or not imported):
        /// an object store keeps them as multipart uploads in its bucket, which a move does not carry.
        var uploadsLeft: Int = 0

        init(format: Int, engine: String, cursorHighWater: Int64, rows: [String: Int]) {
            self.format = format; self.engine = engine; self.cursorHighWater = cursorHighWater; self.rows = rows
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            format = try c.decode(Int.self, forKey: .format)
            engine = try c.decode(String.self, forKey: .engine)
            cursorHighWater = try c.decode(Int64.self, forKey: .cursorHighWater)
            rows = try c.decode([String: Int].self, forKey: .rows)
            uploadsLeft = try c.decodeIfPresent(Int.self, forKey: .uploadsLeft) ?? 0
        }
    }

    /// The tables of unfinished upload sessions, which move only between stores that keep their
    /// parts as files (`ContentBackend.movesUploadSessions`).
    static let sessionTables: Set<String> = ["uploads", "upload_chunks", "upload_partials"]

    /// One column value in `metadata.jsonl`, typed so every value reads back as it was.
    enum Cell: Codable, Equatable {
        case null, integer(Int64), real(Double), text(String), blob(String)

        init(_ v: SQLValue) {
            switch v {
            case .null: self = .null
            case .integer(let i): self = .integer(i)
            case .real(let d): self = .real(d)
            case .text(let s): self = .text(s)
            case .blob(let b): self = .blob(Data(b).base64EncodedString())
            }
        }

        var value: SQLValue {
            switch self {
            case .null: return .null
            case .integer(let i): return .integer(i)
            case .real(let d): return .real(d)
            case .text(let s): return .text(s)
            case .blob(let b): return .blob([UInt8](Data(base64Encoded: b) ?? Data()))
            }
        }
    }

    /// One line of `metadata.jsonl`: a table's row.
    struct Line: Codable {
        var table: String
        var values: [Cell]
    }

    /// Writes the store at `location` (its content in `content`, its signing key in `dataDir`)
    /// to the new folder `bundle`.
    static func export(dataDir: String, location: MetadataLocation, content: any ContentBackend, to bundle: String) throws -> Manifest {
        if FileSystem.exists(bundle) && !FileSystem.list(bundle).isEmpty {
            throw StoreMoveError("\(bundle) is not empty: export into a new folder")
        }
        try FileSystem.makeDirectory(bundle)
        let store = try MetadataStore(location)
        let out = bundle + "/metadata.jsonl"
        guard FileManager.default.createFile(atPath: out, contents: nil, attributes: [.posixPermissions: 0o600]),
              let handle = FileHandle(forWritingAtPath: out) else { throw StoreMoveError("cannot create \(out)") }
        defer { try? handle.close() }
        let encoder = JSONEncoder()
        var manifest = Manifest(format: format, engine: "", cursorHighWater: 0, rows: [:])
        var revisions: [(id: String, size: Int64)] = [], uploads: [String] = []
        try store.write(.store) { db in
            manifest.engine = db.dialect.name
            for table in PortableTable.all {
                var rows = try db.portableRows(table)
                if !content.movesUploadSessions && sessionTables.contains(table.name) {
                    if table.name == "uploads" { manifest.uploadsLeft = rows.count }
                    rows = []
                }
                manifest.rows[table.name] = rows.count
                for row in rows {
                    var line = try encoder.encode(Line(table: table.name, values: row.map(Cell.init)))
                    line.append(0x0a)
                    try handle.write(contentsOf: line)
                }
                if table.name == "revisions" {
                    let id = table.columns.firstIndex(of: "id")!, size = table.columns.firstIndex(of: "size")!
                    revisions = rows.compactMap { r in r[id].string.map { ($0, r[size].int64 ?? 0) } }
                }
                if table.name == "uploads" { uploads = rows.compactMap { $0[0].string } }
            }
            manifest.cursorHighWater = try db.cursorHighWater()
        }
        try handle.synchronize()
        try FileSystem.makeDirectory(bundle + "/content")
        for r in revisions { try content.export(revision: r.id, size: r.size, to: bundle + "/content/" + r.id) }
        try FileSystem.syncDirectory(bundle + "/content")
        if let folder = content as? FolderContent {
            // A finished session's part file became its revision's content: only open sessions have one.
            try copyFiles(uploads.map { $0 + ".part" }.filter { FileSystem.exists(folder.uploadsDir + "/" + $0) },
                          from: folder.uploadsDir, to: bundle + "/uploads")
        }
        let secret = dataDir + "/jwt.secret"
        if FileSystem.exists(secret) { try FileSystem.writeAtomically(try FileSystem.readAll(secret), to: bundle + "/jwt.secret") }
        try FileSystem.writeAtomically(Array(try JSONEncoder().encode(manifest)), to: bundle + "/manifest.json")
        return manifest
    }

    /// Reads `bundle` into the empty store at `location` (its content into `content`, its
    /// signing key into `dataDir`).
    static func `import`(dataDir: String, location: MetadataLocation, content: any ContentBackend, from bundle: String) throws -> Manifest {
        guard FileSystem.exists(bundle + "/manifest.json") else {
            throw StoreMoveError("\(bundle) has no manifest.json: it is not a finished `vault-server export`")
        }
        var manifest = try JSONDecoder().decode(Manifest.self, from: Data(try FileSystem.readAll(bundle + "/manifest.json")))
        manifest.uploadsLeft = 0
        guard manifest.format == format else {
            throw StoreMoveError("the bundle is format \(manifest.format); this server reads format \(format)")
        }
        try FileSystem.makeDirectory(dataDir)
        let store = try MetadataStore(location)
        let text = try String(contentsOfFile: bundle + "/metadata.jsonl", encoding: .utf8)
        let decoder = JSONDecoder()
        try store.write(.store) { db in
            guard try db.hasNoUsers() else {
                throw StoreMoveError("\(location) already has users: import only into an empty store")
            }
            // SQLite numbers one feed for all owners: a feed numbered per owner is renumbered
            // above every cursor a client may hold, and those cursors expire.
            let renumber = db.dialect.changeNumbering == .global && manifest.engine != db.dialect.name
            if renumber { try db.continueNumbering(after: manifest.cursorHighWater + 1) }
            var counts: [String: Int] = [:], renumbered = 0
            for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
                let line = try decoder.decode(Line.self, from: Data(raw.utf8))
                guard let table = PortableTable.named(line.table), line.values.count == table.columns.count else {
                    throw StoreMoveError("the bundle has a row of an unknown table or shape (\(line.table))")
                }
                if !content.movesUploadSessions && sessionTables.contains(table.name) {
                    if table.name == "uploads" { manifest.uploadsLeft += 1 }
                    counts[table.name, default: 0] += 1
                    continue
                }
                let values = line.values.map(\.value)
                if renumber && table == PortableTable.changes {
                    try db.insertPortableRow(table, columns: table.columns.dropFirst(), values.dropFirst())
                    renumbered += 1
                } else {
                    try db.insertPortableRow(table, columns: table.columns[...], values[...])
                }
                counts[table.name, default: 0] += 1
            }
            guard counts.filter({ $0.value > 0 }) == manifest.rows.filter({ $0.value > 0 }) else {
                throw StoreMoveError("the bundle's rows do not match its manifest: it is damaged or incomplete")
            }
            if renumber && renumbered > 0 { try db.expireCursors(through: manifest.cursorHighWater + 1) }
            if !renumber { try db.continueNumbering(after: manifest.cursorHighWater) }
        }
        for name in FileSystem.list(bundle + "/content") { try content.importRevision(name, from: bundle + "/content/" + name) }
        if let folder = content as? FolderContent {
            try FileSystem.syncDirectory(folder.contentDir)
            try copyFiles(FileSystem.list(bundle + "/uploads"), from: bundle + "/uploads", to: folder.uploadsDir)
        }
        let secret = bundle + "/jwt.secret", target = dataDir + "/jwt.secret"
        if FileSystem.exists(secret) {
            let key = try FileSystem.readAll(secret)
            if !FileSystem.exists(target) {
                try FileSystem.writeAtomically(key, to: target)
            } else if try FileSystem.readAll(target) != key {
                throw StoreMoveError("\(target) holds another token signing key: the metadata is imported, but the users' tokens would be refused; replace it with \(secret)")
            }
        }
        return manifest
    }

    /// Hard-links (else copies) each of `names` from `source` into `target` (see `copyFile`).
    private static func copyFiles(_ names: [String], from source: String, to target: String) throws {
        try FileSystem.makeDirectory(target)
        for name in names { try copyFile(source + "/" + name, to: target + "/" + name) }
        try FileSystem.syncDirectory(target)
    }

    /// Hard-links (else copies) `from` to `to`, skipping one that is there already (a shared
    /// folder); a missing source file is an error (the bundle or the folder is not what the
    /// metadata says).
    static func copyFile(_ from: String, to: String) throws {
        if FileSystem.exists(to) { return }
        guard FileSystem.exists(from) else { throw StoreMoveError("\(from) is missing: the metadata references it") }
        do { try FileSystem.link(from, to) } catch { try FileManager.default.copyItem(atPath: from, toPath: to) }
    }
}

/// A store move that cannot go ahead, and what to do instead.
struct StoreMoveError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
