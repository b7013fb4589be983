import Foundation
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// A killed `vault backup import` leaves its temp folder beside the target: a complete copy of
/// the restored vault with its original keyslots (it still opens with the old password). The
/// import holds an `flock` on `.import.lock` inside it while it runs; the next `vault` command
/// that finds such a folder unlocked removes it, overwriting its keyslot files first.
///
/// The folder is made as `.<name>.importing-<hex>`, claimed (lock file created and locked), and
/// only then renamed to `.<name>.import-<hex>`: every `.import-` folder has its claim from the
/// start, so one without a claim file was left by a vault that did not claim (before this rule).
extension BackupBundle {
    static let importLockName = ".import.lock"

    /// The name prefix of the temp folder of an import into a folder named `name`.
    static func importFolderPrefix(_ name: String) -> String { "." + name + ".import-" }
    static func claimingFolderPrefix(_ name: String) -> String { "." + name + ".importing-" }

    /// Creates a new, claimed import folder in `parent` for a target named `name`; returns it and
    /// the claim's descriptor (close it to release the claim, after the folder is published or removed).
    static func claimImportFolder(in parent: String, for name: String) throws -> (String, Int32) {
        let suffix = Hex.encode(SecureRandom.bytes(6))
        let claiming = parent + "/" + claimingFolderPrefix(name) + suffix
        let folder = parent + "/" + importFolderPrefix(name) + suffix
        guard mkdir(claiming, 0o700) == 0 else {
            throw VaultError(.io, "cannot create \(claiming): \(POSIX.errnoMessage())", hint: "nothing was changed")
        }
        let fd = open(claiming + "/" + importLockName, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0, rename(claiming, folder) == 0 else {
            let e = POSIX.errnoMessage()
            if fd >= 0 { close(fd) }
            try? FileManager.default.removeItem(atPath: claiming)
            throw VaultError(.io, "cannot prepare the import folder \(folder): \(e)", hint: "nothing was changed")
        }
        return (folder, fd)
    }

    /// Removes the temp folders of killed imports beside `layout.root` (those whose claim is not
    /// held). Returns the folders removed.
    public static func removeAbandonedImports(beside layout: VaultLayout) -> [String] {
        let (parent, name) = splitPath(layout.root)
        let importing = importFolderPrefix(name), claiming = claimingFolderPrefix(name)
        guard let dir = opendir(parent) else { return [] }
        var found: [(String, unclaimedIsLeftover: Bool)] = []
        while let entry = readdir(dir) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if entryName.hasPrefix(importing) { found.append((parent + "/" + entryName, true)) }
            if entryName.hasPrefix(claiming) { found.append((parent + "/" + entryName, false)) }
        }
        closedir(dir)
        var removed: [String] = []
        for (folder, unclaimedIsLeftover) in found {
            var st = stat()
            guard lstat(folder, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == getuid() else { continue }
            let fd = open(folder + "/" + importLockName, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            if fd < 0 {
                // No claim file: an import folder of an older vault, or a claim being made this instant.
                guard errno == ENOENT, unclaimedIsLeftover else { continue }
            } else {
                defer { close(fd) }
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }   // an import is running
            }
            removeImportFolder(folder)
            removed.append(folder)
        }
        return removed
    }

    /// Removes an import's temp folder: its keyslot files (the only way into the rest) are
    /// overwritten with random bytes and synced first, then everything is deleted. On a
    /// copy-on-write or flash file system the old blocks may survive an overwrite; without them the
    /// database and blobs are unreadable.
    static func removeImportFolder(_ folder: String) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for e in entries where e.hasPrefix("keyslots") { overwrite(folder + "/" + e) }
        try? FileManager.default.removeItem(atPath: folder)
    }

    private static func overwrite(_ path: String) {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return }
        let noise = SecureRandom.bytes(Int(st.st_size))
        _ = noise.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        fsync(fd)
    }
}
