import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Failed unlock attempts, for the policy's `maxFailedUnlocks` (SECURITY.md "Failed unlocks and
/// wipe"). The file `unlock-failures` holds `{"total":N,"sinceSuccess":k}`; the encrypted database
/// remembers the last `total` seen at a successful unlock, so a counter reset by editing or deleting
/// the file is detected at the next successful unlock.
public enum UnlockFailures {
    package struct Counter: Codable {
        package var total: Int64 = 0; package var sinceSuccess: Int64 = 0
        package init(total: Int64 = 0, sinceSuccess: Int64 = 0) { self.total = total; self.sinceSuccess = sinceSuccess }
    }
    package static let seenKey = "unlock_failures_total_seen"

    package static func path(_ layout: VaultLayout) -> String { layout.path("unlock-failures") }
    package static func wipedMarker(_ layout: VaultLayout) -> String { layout.path("WIPED.txt") }

    package static func read(_ layout: VaultLayout) -> Counter {
        guard let data = FileManager.default.contents(atPath: path(layout)),
              let c = try? JSONDecoder().decode(Counter.self, from: data) else { return Counter() }
        return c
    }

    /// False where the counter cannot be written: the vault's folder is on a read-only filesystem.
    package static func canRecord(_ layout: VaultLayout) -> Bool {
        access(layout.root, W_OK) == 0 || errno != EROFS
    }

    package static func write(_ c: Counter, _ layout: VaultLayout) throws {
        try POSIX.writeAtomically(Array(try JSONEncoder().encode(c)), to: path(layout))
    }

    /// Runs `body` holding an exclusive `flock` on the vault folder itself. Unlock attempts do not
    /// hold the vault lock while they derive keys, so without this, attempts that fail at the same
    /// moment would each read the same count and write it back one higher: most would go uncounted.
    package static func serialised<R>(_ layout: VaultLayout, _ body: () throws -> R) rethrows -> R {
        let fd = open(layout.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { while flock(fd, LOCK_EX) != 0 && errno == EINTR {} }
        defer { if fd >= 0 { flock(fd, LOCK_UN); close(fd) } }
        return try body()
    }

    /// Records a failed attempt; wipes the vault when the policy's limit is reached.
    /// Returns the error to report (the original one, or the wipe notice).
    public static func recordFailure(_ layout: VaultLayout, policy: EffectivePolicy, vaultId: String, original: VaultError) -> VaultError {
        serialised(layout) { countFailure(layout, policy: policy, vaultId: vaultId, original: original) }
    }

    private static func countFailure(_ layout: VaultLayout, policy: EffectivePolicy, vaultId: String, original: VaultError) -> VaultError {
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

    /// Removes the keyslots (and any temp copy of them), the database (with its journal and a
    /// rotation's rekeyed copy), the rotation journal and all content; leaves a note saying why.
    package static func wipe(_ layout: VaultLayout, vaultId: String, reason: String) {
        let files = [layout.keyslotFile, layout.databaseFile, layout.databaseFile + "-journal", layout.databaseFile + ".rekey",
                     layout.path("rotation.journal")] + layout.keyslotTempFiles().map(layout.path)
        for f in files { unlink(f) }
        for d in [layout.cacheDirectory, layout.stagingDirectory, layout.tempDirectory] {
            try? FileManager.default.removeItem(atPath: d)
        }
        let item = KeyringSession(vaultId: vaultId, layout: layout)
        try? item.clear()
        try? item.clearLegacy()
        let note = "This vault was wiped on \(Date()) after \(reason).\nThe copy on the server is untouched: run `vault init`, then sign in and sync again.\n"
        try? POSIX.writeAtomically(Array(note.utf8), to: wipedMarker(layout))
    }
}
