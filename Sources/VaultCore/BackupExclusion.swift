import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One marker on one folder: whether it is there, and which backup tools act on it.
public struct BackupMarkerStatus: Codable, Sendable, Equatable {
    /// `CACHEDIR.TAG`, `user.xdg.robots.backup` or `nodump`.
    public var marker: String
    public var state: MarkerState
    /// Why a marker is unsupported or unreadable, when it is.
    public var detail: String?
    /// The tools (and options) that leave a marked folder out of a backup. Empty: none today.
    public var honouredBy: [String]
}

/// A folder the vault can mark, what it holds, and its markers.
public struct BackupExclusionLocation: Codable, Sendable, Equatable {
    /// `cache` (default scope) or `vault` (the vault root, `--all`).
    public var name: String
    /// The folder's path.
    public var path: String
    /// What a backup leaves out when this folder is excluded.
    public var covers: String
    public var markers: [BackupMarkerStatus]
    /// True when at least one marker is present.
    public var excluded: Bool { markers.contains { $0.state == .present } }
}

/// What `vault backup-exclusion status` (and apply/remove) report.
public struct BackupExclusionReport: Codable, Sendable {
    /// `none`, `cache` (the content cache only) or `all` (the whole vault folder).
    public var scope: String
    public var locations: [BackupExclusionLocation]
    /// Plain statements of what a backup can no longer restore.
    public var warnings: [String]
    /// What this command changed or could not do (unsupported markers).
    public var notes: [String]

    enum CodingKeys: String, CodingKey { case scope, locations, warnings, notes }
}

/// Keeps vault data out of backups of the home folder (BRIEF §6). Three markers per folder:
///
/// * `CACHEDIR.TAG` with the Cache Directory Tagging signature: GNU tar `--exclude-caches`
///   (`-under`, `-all`), `restic backup --exclude-caches` and `borg create --exclude-caches` skip
///   the folder's contents;
/// * the nodump inode flag (`chattr +d`): `borg create --exclude-nodump` skips the folder;
/// * the `user.xdg.robots.backup=false` attribute (freedesktop proposal), which no common backup
///   tool reads today; set for tools that follow the proposal.
///
/// Scope `cache` marks the content cache (sealed content the server can send again). Scope `all`
/// also marks the vault root, so staging (unsynced content), the database and the keyslot file are
/// left out too. Applying a scope is idempotent and leaves exactly that scope marked.
public struct BackupExclusion: Sendable {
    /// The vault whose folders are marked.
    public let layout: VaultLayout

    /// Markers for the vault at `layout` (no unlock needed: markers are not secret).
    public init(layout: VaultLayout) { self.layout = layout }

    static let tagName = "CACHEDIR.TAG"
    static let signature = "Signature: 8a477f597d28d172789f06886806bc55"

    static let honours: [String: [String]] = [
        tagName: ["tar --exclude-caches", "tar --exclude-caches-under", "tar --exclude-caches-all",
                  "restic backup --exclude-caches", "borg create --exclude-caches"],
        FileMarkers.xattrName: [],
        "nodump": ["borg create --exclude-nodump", "bsdtar --nodump", "dump(8)"],
    ]

    func tagText(root: Bool) -> String {
        Self.signature + "\n" + (root
            ? "# This file is a cache directory tag created by vault: the whole vault (keyslots, database, staging, cache)\n# is left out of backups (vault backup-exclusion apply --all). Restore it with `vault backup import`.\n"
            : "# This file is a cache directory tag created by vault: sealed content here can be downloaded again.\n")
            + "# For information about cache directory tags, see https://bford.info/cachedir/\n"
    }

    var locations: [(name: String, path: String, covers: String)] {
        [("cache", layout.cacheDirectory, "the content cache (sealed content the server can send again)"),
         ("vault", layout.root, "the whole vault: keyslots, metadata database, staging (unsynced content) and cache")]
    }

    func requireVault() throws {
        guard Vault.exists(layout) else {
            throw VaultError(.notInitialized, "no vault at \(layout.root)", hint: "run `vault init` first (or set VAULT_HOME)")
        }
    }

    /// The markers now on the vault's folders, and what a backup then cannot restore.
    public func status() throws -> BackupExclusionReport {
        try requireVault()
        let locs = locations.map { loc in
            BackupExclusionLocation(name: loc.name, path: loc.path, covers: loc.covers, markers: [
                marker(Self.tagName, tagState(loc.path)),
                marker(FileMarkers.xattrName, FileMarkers.xattrState(loc.path)),
                marker("nodump", FileMarkers.nodumpState(loc.path)),
            ])
        }
        let all = locs[1].excluded
        let scope = all ? "all" : (locs[0].excluded ? "cache" : "none")
        var notes: [String] = []
        for l in locs where l.excluded {
            for m in l.markers where m.state == .unsupported {
                notes.append("\(m.marker) on \(l.name): \(m.detail ?? "not supported here")")
            }
        }
        return BackupExclusionReport(scope: scope, locations: locs, warnings: all ? warningsForAll() : [], notes: notes)
    }

    /// Marks the cache (and, with `all`, the vault root); with `all == false` any root markers are
    /// taken away, so the scope is exactly what was asked. Idempotent.
    @discardableResult
    public func apply(all: Bool) throws -> BackupExclusionReport {
        try requireVault()
        var notes = try mark(layout.cacheDirectory, root: false, on: true)
        let rootWasMarked = try status().locations[1].excluded
        if all {
            notes += try mark(layout.root, root: true, on: true)
        } else if rootWasMarked {
            _ = try mark(layout.root, root: true, on: false)
            notes.append("narrowed to the cache: the vault root is no longer marked (use --all to keep it out of backups)")
        }
        var r = try status()
        r.notes = notes
        return r
    }

    /// Takes every vault marker away (cache and root): backups include the whole vault again.
    @discardableResult
    public func remove() throws -> BackupExclusionReport {
        try requireVault()
        let notes = try mark(layout.cacheDirectory, root: false, on: false) + mark(layout.root, root: true, on: false)
        var r = try status()
        r.notes = notes
        return r
    }

    func marker(_ name: String, _ s: (MarkerState, String?)) -> BackupMarkerStatus {
        BackupMarkerStatus(marker: name, state: s.0, detail: s.1, honouredBy: Self.honours[name] ?? [])
    }

    /// Sets or clears all three markers on `dir`; returns notes for markers the filesystem lacks.
    func mark(_ dir: String, root: Bool, on: Bool) throws -> [String] {
        let tag = dir + "/" + Self.tagName
        if on {
            let text = Array(tagText(root: root).utf8)
            if (try? POSIX.readFile(tag)) != text { try POSIX.writeAtomically(text, to: tag) }
        } else if tagState(dir).0 == .present {
            if unlink(tag) != 0 { throw VaultError(.io, "cannot remove \(tag): \(POSIX.errnoMessage())") }
            try POSIX.fsyncDirectory(dir)
        }
        var notes: [String] = []
        let name = root ? "the vault root" : "the cache"
        for (marker, result) in [(FileMarkers.xattrName, on ? try FileMarkers.setXattr(dir) : try FileMarkers.removeXattr(dir)),
                                 ("nodump", try FileMarkers.setNodump(dir, on: on))] where result.0 == .unsupported {
            if on { notes.append("\(marker) not set on \(name): \(result.1 ?? "not supported here"); the other markers still apply") }
        }
        return notes
    }

    /// A CACHEDIR.TAG is present only when it is a regular file starting with the exact signature.
    func tagState(_ dir: String) -> (MarkerState, String?) {
        let tag = dir + "/" + Self.tagName
        var st = stat()
        guard lstat(tag, &st) == 0 else { return (.absent, nil) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return (.absent, "\(Self.tagName) is not a regular file, so tools ignore it") }
        guard let bytes = try? POSIX.readFile(tag), bytes.starts(with: Array(Self.signature.utf8)) else {
            return (.absent, "\(Self.tagName) lacks the signature line, so tools ignore it")
        }
        return (.present, nil)
    }

    /// What a backup of the home folder can no longer restore once the whole vault is excluded.
    func warningsForAll() -> [String] {
        var w: [String] = []
        let staged = ((try? FileManager.default.contentsOfDirectory(atPath: layout.stagingDirectory)) ?? []).filter { $0.hasSuffix(".blob") }.count
        w.append(staged > 0
                 ? "\(staged) file(s) in staging are not on the server yet: a backup will not hold them; until they upload they exist only on this device"
                 : "files you add while offline wait in staging until they upload: a backup will not hold them")
        let types = Set(((try? Vault.readKeyslots(layout))?.0.body.slots ?? []).map(\.type))
        var vaultLine = "a backup no longer holds the vault itself (keyslots and metadata database): restore it from `vault backup export` bundles, and keep a recovery or escrow key to open them"
        if types.isDisjoint(with: ["recovery", "escrow"]) {
            vaultLine += " — this vault has NO recovery or escrow key slot: add one with `vault key add-recovery`"
        }
        w.append(vaultLine)
        return w
    }
}

extension Vault {
    /// Keeps this vault's data out of backups (`vault init` calls this): the content cache, and with
    /// `all` the whole vault folder (staging, database, keyslots). Idempotent; markers the
    /// filesystem cannot hold are reported in `notes`, not thrown.
    @discardableResult
    public func applyBackupExclusion(all: Bool) throws -> BackupExclusionReport {
        try BackupExclusion(layout: layout).apply(all: all)
    }
}
