import VaultSQL

/// The SQL of the two key/value tables, `settings` (what the user set: the content budget, sync
/// settings, marks of unfinished passes) and `sync_state` (what the sync layer keeps: cursor,
/// device id, token, health). Typed reads and writes only; the caller holds the transaction.
struct KeyValueTable {
    /// Which of the two tables (both `key TEXT PRIMARY KEY, value TEXT NOT NULL`).
    enum Name: String { case settings, syncState = "sync_state" }

    let db: SQLDatabase
    let name: Name

    /// The value of `key`, nil when unset.
    func value(_ key: String) throws -> String? {
        try db.scalar(String.self, "SELECT value FROM \(name.rawValue) WHERE key = ?", [key])
    }

    /// Every key and value.
    func all() throws -> [(key: String, value: String)] {
        try db.query("SELECT key, value FROM \(name.rawValue)").map { (try $0.decode(String.self, "key"), try $0.decode(String.self, "value")) }
    }

    /// Sets `key` to `value`, or with nil removes it.
    func set(_ key: String, _ value: String?) throws {
        try db.run("DELETE FROM \(name.rawValue) WHERE key = ?", [key])
        if let value { try db.run("INSERT INTO \(name.rawValue)(key, value) VALUES (?, ?)", [key, value]) }
    }

    /// Changes the value of `key` if it is set.
    func update(_ key: String, to value: String) throws {
        try db.run("UPDATE \(name.rawValue) SET value = ? WHERE key = ?", [value, key])
    }

    /// Removes `keys`.
    func remove(_ keys: [String]) throws {
        for key in keys { try db.run("DELETE FROM \(name.rawValue) WHERE key = ?", [key]) }
    }
}

extension Vault {
    /// The `settings` table of this vault's database.
    var settingsTable: KeyValueTable { KeyValueTable(db: db, name: .settings) }
    /// The `sync_state` table of this vault's database.
    var syncStateTable: KeyValueTable { KeyValueTable(db: db, name: .syncState) }
}
