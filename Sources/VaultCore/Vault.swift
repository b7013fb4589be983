import Foundation
import VaultCrypto
import VaultSQL
import VaultPrimitives

/// An open, unlocked vault: the keyslots, the metadata database and the sealed blob store,
/// held under the vault lock for as long as this object lives. The only door to content is the
/// sealed read/write API (`importContent`, `openContent`).
public final class Vault {
    public let layout: VaultLayout
    public internal(set) var keyslots: KeyslotFile { didSet { rebuildEpochs() } }
    var keys: KeyHierarchy { didSet { rebuildEpochs() } }
    /// The master key, in locked memory, for slot changes and rotation.
    var masterKey: SecureBytes { didSet { rebuildEpochs() } }
    /// The keys of every epoch this vault reaches (the current one and, through the key history,
    /// the older ones): shared by the blob store and the remote codec.
    public private(set) var epochs: EpochKeys
    /// The metadata database: VaultCore's own. Other modules use the typed operations
    /// (`Vault+Tree`, `Vault+Outbox`, `Vault+Transfers`, `Vault+SyncState`, …).
    var db: SQLDatabase
    public internal(set) var blobs: BlobStore
    let lock: VaultLock
    /// Kept as long as the vault is open (a running agent's yield: its background work waits).
    var heldWhileOpen: AnyObject?
    /// The policy's content budget maximum, if any (set by the caller that loaded the policy).
    public var budgetMax: UInt64?
    /// Set once this command has warned that the cache cannot fit the budget (warn once).
    var budgetWarningGiven = false

    /// What a command will do with the vault: a `.read` command (ls, tree, cat, get, status,
    /// storage) also runs on a read-only filesystem; a `.readWrite` one is refused there, clearly.
    public enum Access: Sendable {
        case read, readWrite
    }

    /// The vault id (hex).
    public var vaultId: String { keyslots.body.vaultId }

    /// Seconds to wait for another command's hold on the vault (`VAULT_LOCK_TIMEOUT`, default
    /// 5), read once per process: the mount asks for it at every request, and a read of the
    /// environment builds a dictionary of all of it.
    public static let lockTimeout: TimeInterval =
        ProcessInfo.processInfo.environment["VAULT_LOCK_TIMEOUT"].flatMap(TimeInterval.init) ?? 5

    /// True when `layout` holds a vault.
    public static func exists(_ layout: VaultLayout) -> Bool { layout.holdsVault }

    /// Reads the keyslot file (not yet authenticated: that needs the master key).
    public static func readKeyslots(_ layout: VaultLayout) throws -> (KeyslotFile, [UInt8]) { try KeyslotFile.read(layout) }

    /// Creates a new vault: layout, a random master key wrapped in a password slot, the database.
    @discardableResult
    public static func create(layout: VaultLayout, password: SecureBytes, kdf: KDFParameters) throws -> Vault {
        if exists(layout) {
            throw VaultError(.alreadyExists, "a vault already exists at \(layout.root)", hint: "use it, or choose another VAULT_HOME")
        }
        if let problem = kdf.storageProblem {
            throw VaultError(.usage, "\(problem): a keyslot with these KDF parameters could never be opened; nothing was created")
        }
        for d in layout.directories { try POSIX.ensurePrivateDirectory(d) }
        unlink(UnlockFailures.wipedMarker(layout))
        unlink(UnlockFailures.path(layout))
        let lock = try VaultLock(path: layout.lockFile, timeout: lockTimeout)
        let vaultIdBytes = SecureRandom.bytes(16)
        let vaultId = Hex.encode(vaultIdBytes)
        let master = SecureBytes.random(count: 32)
        let slot = try KeyslotFile.passwordSlot(id: "password-1", password: password, kdf: kdf, masterKey: master, vaultId: vaultId)
        let file = KeyslotFile(body: .init(format: 1, vaultId: vaultId, epoch: 1, slots: [slot], generation: 1))
        let keys = try KeyHierarchy(masterKey: master, vaultId: vaultIdBytes, epoch: 1)
        // The database first: a crash before the keyslot file is written leaves no vault, not half of one.
        unlink(layout.databaseFile)
        let db = try openDatabase(layout: layout, keys: keys)
        try NodesTable(db: db).insertRoot(now: Int64(Date().timeIntervalSince1970))
        try POSIX.writeAtomically(try file.serialized(macKey: keys.keyslotMacKey), to: layout.keyslotFile)
        return Vault(layout: layout, keyslots: file, keys: keys, masterKey: master, db: db, lock: lock)
    }

    /// Opens the vault with its master key (from the keyring or a password slot). `lock` says
    /// whether transfer controls may run beside this command (see `VaultLock`); a `.control`
    /// request may get a vault opened beside a running sync (`isBesideSync`). On a read-only
    /// filesystem only `.read` access is granted: the database is opened read-only, with no migration.
    /// `lockTimeout` bounds the wait for the lock (then `.busy`).
    public static func open(layout: VaultLayout, masterKey: SecureBytes, lock request: VaultLock.Request = .exclusive,
                            access: Access = .readWrite, lockTimeout: TimeInterval = lockTimeout) throws -> Vault {
        let lock = try VaultLock(path: layout.lockFile, timeout: lockTimeout, request: request)
        let (file, bytes) = try readKeyslots(layout)
        let keys = try KeyHierarchy(masterKey: masterKey, vaultId: file.vaultId, epoch: file.body.epoch)
        try KeyslotFile.verify(bytes: bytes, macKey: keys.keyslotMacKey)
        if lock.mode == .readOnly {
            guard access == .read else { throw readOnlyFilesystem(layout) }
            if file.body.pendingRotation != nil {
                throw VaultError(.io, "the vault at \(layout.root) is on a read-only filesystem, and a key rotation interrupted there must finish before it can be read",
                                 hint: "remount it read-write and run any vault command (the rotation then completes)")
            }
            let db = try openDatabase(layout: layout, keys: keys, readOnly: true)
            return Vault(layout: layout, keyslots: file, keys: keys, masterKey: masterKey, db: db, lock: lock)
        }
        if lock.mode == .beside {
            // The running sync opened (and migrated) the database; touch nothing else.
            let db = try openDatabase(layout: layout, keys: keys, migrate: false)
            return Vault(layout: layout, keyslots: file, keys: keys, masterKey: masterKey, db: db, lock: lock)
        }
        if let pending = file.body.pendingRotation {
            // A rotation was interrupted: finish it before anything else touches the vault.
            return try resumeRotation(layout: layout, file: file, oldMaster: masterKey, oldKeys: keys, pending: pending, lock: lock)
        }
        try removeStaleRotationJournal(layout)
        let db = try openDatabase(layout: layout, keys: keys)
        let vault = Vault(layout: layout, keyslots: file, keys: keys, masterKey: masterKey, db: db, lock: lock)
        if [.exclusive, .sync].contains(lock.mode) {
            try vault.removeInterruptedWrites()   // the vault is ours alone: no write of another command is in flight
        }
        return vault
    }

    /// The error for a command that would change a vault on a read-only filesystem.
    static func readOnlyFilesystem(_ layout: VaultLayout) -> VaultError {
        VaultError(.io, "the vault at \(layout.root) is on a read-only filesystem: this command changes the vault and cannot run there; nothing was changed",
                   hint: "remount it read-write to change it; ls, tree, cat, get, status and storage work read-only")
    }

    /// Opens the metadata database. `readOnly` (a read-only filesystem) opens it
    /// `SQLITE_OPEN_READONLY` and never migrates: a schema that needs an upgrade is refused.
    static func openDatabase(layout: VaultLayout, keys: KeyHierarchy, migrate: Bool = true, readOnly: Bool = false) throws -> SQLDatabase {
        let fresh = !readOnly && !POSIX.exists(layout.databaseFile)
        let db: SQLDatabase
        do {
            db = try keys.databaseKey.withUnsafeBytes { try SQLDatabase(path: layout.databaseFile, rawKey: $0, readOnly: readOnly) }
        } catch let e as SQLError where e.kind == .notADatabase || e.kind == .corrupt {
            throw VaultError(.integrity, "the metadata database cannot be decrypted with this vault's key (damaged, replaced or from another vault)",
                             hint: "restore metadata.db from a backup; content blobs are intact")
        } catch let e as SQLError {
            throw VaultError(.io, "cannot open the metadata database: \(e)")
        }
        if fresh { chmod(layout.databaseFile, 0o600) }
        if readOnly {
            guard try MetadataSchema.isCurrent(db) else {
                throw VaultError(.io, "the vault at \(layout.root) needs a database upgrade, which cannot be written on its read-only filesystem",
                                 hint: "remount it read-write and run any vault command once")
            }
            return db
        }
        guard migrate else { return db }
        do { try MetadataSchema.migrate(db) } catch let e as SQLError {
            throw VaultError(.integrity, "the metadata database is damaged: \(e.message)")
        }
        return db
    }

    init(layout: VaultLayout, keyslots: KeyslotFile, keys: KeyHierarchy, masterKey: SecureBytes, db: SQLDatabase, lock: VaultLock) {
        self.layout = layout; self.keyslots = keyslots; self.keys = keys; self.masterKey = masterKey; self.db = db; self.lock = lock
        let epochs = EpochKeys(keyslots: keyslots, keys: keys, masterKey: masterKey)
        self.epochs = epochs
        self.blobs = BlobStore(layout: layout, epochs: epochs)
    }

    /// After the keyslots or the keys changed: new epoch keys for the codec and the blob store.
    private func rebuildEpochs() {
        guard keys.epoch == keyslots.body.epoch else { return }   // mid-update (rotation sets both)
        epochs = EpochKeys(keyslots: keyslots, keys: keys, masterKey: masterKey)
        blobs.epochs = epochs
    }

    /// True when this command runs beside a `vault sync` that holds the vault (a transfer
    /// control): rows marked running are really running, and only transfer bookkeeping may change.
    public var isBesideSync: Bool { lock.mode == .beside }

    /// True when the vault is on a read-only filesystem (opened for reading only).
    public var isReadOnly: Bool { lock.mode == .readOnly }

    /// Seconds since the epoch, for timestamps.
    public static var now: Int64 { TestHooks.clock ?? Int64(Date().timeIntervalSince1970) }
}
