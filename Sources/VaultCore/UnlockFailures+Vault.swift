import Foundation

/// The half of the failed-unlock count that needs the database: the last total seen at a
/// successful unlock, which shows a counter file reset behind the vault's back.
extension UnlockFailures {
    /// Resets the count after a successful unlock; returns a warning when the counter file was
    /// reset behind the vault's back.
    public static func recordSuccess(_ vault: Vault) throws -> String? {
        try serialised(vault.layout) { try resetCount(vault) }
    }

    private static func resetCount(_ vault: Vault) throws -> String? {
        let c = read(vault.layout)
        let seen = try vault.settingsTable.value(seenKey).flatMap(Int64.init) ?? 0
        var warning: String?
        var total = c.total
        if c.total < seen {
            warning = "the failed-unlock counter was reset outside vault (it said \(c.total), the vault had seen \(seen)): someone may have tried passwords and hidden it"
            total = seen
        }
        if c.sinceSuccess != 0 || c.total != total || warning != nil { try write(Counter(total: total, sinceSuccess: 0), vault.layout) }
        if total != seen {
            try vault.db.transaction { try vault.settingsTable.set(seenKey, String(total)) }
        }
        return warning
    }
}
