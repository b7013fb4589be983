import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Failed unlock attempts, for the policy's `maxFailedUnlocks` (SECURITY.md "Failed unlocks and
/// wipe"). The file `unlock-failures` holds `{"total":N,"sinceSuccess":k}`; the encrypted database
/// remembers the last `total` seen at a successful unlock, so a counter reset by editing or deleting
/// the file is detected at the next successful unlock.
public enum UnlockFailures {
    struct Counter: Codable { var total: Int64 = 0; var sinceSuccess: Int64 = 0 }
    static let seenKey = "unlock_failures_total_seen"

    static func path(_ layout: VaultLayout) -> String { layout.path("unlock-failures") }
    static func wipedMarker(_ layout: VaultLayout) -> String { layout.path("WIPED.txt") }

    static func read(_ layout: VaultLayout) -> Counter {
        guard let data = FileManager.default.contents(atPath: path(layout)),
              let c = try? JSONDecoder().decode(Counter.self, from: data) else { return Counter() }
        return c
    }

    /// False where the counter cannot be written: the vault's folder is on a read-only filesystem.
    static func canRecord(_ layout: VaultLayout) -> Bool {
        access(layout.root, W_OK) == 0 || errno != EROFS
    }

    static func write(_ c: Counter, _ layout: VaultLayout) throws {
        try POSIX.writeAtomically(Array(try JSONEncoder().encode(c)), to: path(layout))
    }

    /// Records a failed attempt; wipes the vault when the policy's limit is reached.
    /// Returns the error to report (the original one, or the wipe notice).
    public static func recordFailure(_ layout: VaultLayout, policy: EffectivePolicy, vaultId: String, original: VaultError) -> VaultError {
        var c = read(layout)
        c.total += 1; c.sinceSuccess += 1
        try? write(c, layout)
        guard let max = policy.maxFailedUnlocks.value else { return original }
        if c.sinceSuccess >= Int64(max) {
            wipe(layout, vaultId: vaultId, reason: "\(c.sinceSuccess) failed unlock attempts (policy maxFailedUnlocks = \(max))")
            return VaultError(.policy, "\(original.message); this was failed attempt \(c.sinceSuccess) of \(max): the local vault has been wiped as the policy requires",
                              hint: "the server copy is untouched: run `vault init` and sign in again to get your files back")
        }
        return VaultError(original.kind, "\(original.message) (failed attempt \(c.sinceSuccess) of \(max) before this device's vault is wiped)",
                          hint: original.hint)
    }

    /// Resets the count after a successful unlock; returns a warning when the counter file was
    /// reset behind the vault's back.
    public static func recordSuccess(_ vault: Vault) throws -> String? {
        let c = read(vault.layout)
        let seen = try vault.db.scalar("SELECT value FROM settings WHERE key=?", [seenKey])?.string.flatMap(Int64.init) ?? 0
        var warning: String?
        var total = c.total
        if c.total < seen {
            warning = "the failed-unlock counter was reset outside vault (it said \(c.total), the vault had seen \(seen)): someone may have tried passwords and hidden it"
            total = seen
        }
        if c.sinceSuccess != 0 || c.total != total || warning != nil { try write(Counter(total: total, sinceSuccess: 0), vault.layout) }
        if total != seen {
            try vault.db.transaction {
                try vault.db.run("DELETE FROM settings WHERE key=?", [seenKey])
                try vault.db.run("INSERT INTO settings(key, value) VALUES (?, ?)", [seenKey, String(total)])
            }
        }
        return warning
    }

    /// Removes the keyslots, the database and all content; leaves a note saying why.
    static func wipe(_ layout: VaultLayout, vaultId: String, reason: String) {
        for f in [layout.keyslotFile, layout.databaseFile, layout.databaseFile + "-journal", layout.path("rotation.journal")] { unlink(f) }
        for d in [layout.cacheDirectory, layout.stagingDirectory, layout.tempDirectory] {
            try? FileManager.default.removeItem(atPath: d)
        }
        try? KeyringSession(vaultId: vaultId).clear()
        let note = "This vault was wiped on \(Date()) after \(reason).\nThe copy on the server is untouched: run `vault init`, then sign in and sync again.\n"
        try? POSIX.writeAtomically(Array(note.utf8), to: wipedMarker(layout))
    }
}
