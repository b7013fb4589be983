import Foundation
import VaultCrypto
import VaultSQL
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Master-key rotation (`vault key rotate`): a new master key, every blob's data key rewrapped,
/// the database rekeyed, every slot rewrapped. Crash-safe at every step (SECURITY.md "Key
/// rotation"): the keyslot file records the rotation first, so the vault opens with the old key
/// and finishes the rotation, or with the new key once it is done.
extension Vault {
    /// What a rotation produced.
    public struct RotationResult {
        public var epoch: UInt32
        /// New recovery keys (the old ones stop working): show each once.
        public var recoveryKeys: [(slot: String, key: SecureBytes)]
        public var rewrappedBlobs: Int
        public var droppedSlots: [String]
        public var damagedBlobs: [String]
        /// tpm2 slots sealed again for the new key, and why this machine's could not be (it is then dropped).
        public var resealedSlots: [String] = []
        public var tpmNote: String?
    }

    static let rotationInfo = "vault/v1/rotation"

    static func rotationKey(_ oldMaster: SecureBytes, vaultId: [UInt8]) throws -> SecureBytes {
        try HKDF.sha256(ikm: oldMaster, salt: vaultId, info: Array(rotationInfo.utf8), length: 32)
    }

    static func rotationAAD(vaultId: String, epoch: UInt32) -> [UInt8] { Array("vault-rotation-v1|\(vaultId)|\(epoch)".utf8) }

    static func journalPath(_ layout: VaultLayout) -> String { layout.path("rotation.journal") }

    static func removeStaleRotationJournal(_ layout: VaultLayout) throws {
        if POSIX.exists(journalPath(layout)) { unlink(journalPath(layout)) }
        if POSIX.exists(layout.databaseFile + ".rekey") { unlink(layout.databaseFile + ".rekey") }
    }

    /// Rotates the master key. `password` must open a password slot (it is rewrapped with a fresh salt).
    /// With `tpm`, this machine's tpm2 slot is sealed again for the new key (else, or when that
    /// fails, it is dropped: `tpmNote` says why).
    /// With `fido2`, each fido2 slot the plugged-in key holds is re-wrapped for the new key with a
    /// fresh salt (one touch each; else it is dropped: `tpmNote` says why too).
    public func rotate(password: SecureBytes, tpm: TPMReseal? = nil, fido2: FIDO2Rewrap? = nil) throws -> RotationResult {
        guard keyslots.body.pendingRotation == nil else { throw VaultError(.conflict, "a rotation is already in progress") }
        let newMaster = SecureBytes.random(count: 32)
        let newEpoch = keys.epoch + 1
        var newSlots: [KeyslotFile.Slot] = []
        var recovery: [(String, SecureBytes)] = []
        var dropped: [String] = []
        var matched = false
        for slot in keyslots.body.slots {
            switch slot.type {
            case "password":
                if let p = try slot.kdf?.parameters(), try keyslots.unwrapPassword(slot: slot, typed: password) != nil {
                    newSlots.append(try KeyslotFile.passwordSlot(id: slot.id, password: password, kdf: p.withFreshSalt,
                                                                 masterKey: newMaster, vaultId: vaultId))
                    matched = true
                } else {
                    dropped.append(slot.id)
                }
            case "recovery":
                let k = RecoveryKey.generate()
                newSlots.append(try KeyslotFile.recoverySlot(id: slot.id, recoveryKey: k, masterKey: newMaster, vaultId: vaultId))
                recovery.append((slot.id, k))
            case "escrow":
                guard let pk = slot.orgPublicKey.flatMap(Hex.decode) else { dropped.append(slot.id); continue }
                newSlots.append(try KeyslotFile.escrowSlot(id: slot.id, orgPublicKey: pk, masterKey: newMaster))
            default:
                dropped.append(slot.id)
            }
        }
        guard matched else { throw VaultError(.wrongPassword, "wrong password", hint: "nothing was changed") }
        var resealed: [String] = []
        var tpmNote: String?
        if let tpm, !keyslots.machineBoundSlots.isEmpty {
            do {
                let slot = try resealedTPMSlot(tpm, newMaster: newMaster)
                newSlots.append(slot)
                resealed.append(slot.id)
                dropped.removeAll { $0 == slot.id }
            } catch {
                tpmNote = VaultError.wrap(error).message
            }
        }
        if let fido2 {
            let (slots, note) = rewrappedFIDO2Slots(fido2, newMaster: newMaster)
            newSlots += slots
            resealed += slots.map(\.id)
            dropped.removeAll { id in slots.contains { $0.id == id } }
            if let note { tpmNote = (tpmNote.map { $0 + "; " } ?? "") + "FIDO2: " + note }
        }
        let entry = try KeyslotFile.historyEntry(oldMaster: masterKey, oldEpoch: keys.epoch,
                                                 newKeys: try KeyHierarchy(masterKey: newMaster, vaultId: keys.vaultId, epoch: newEpoch),
                                                 vaultId: vaultId)
        let stats = try runRotation(.init(epoch: newEpoch, nonce: "", wrappedNewMaster: "", slots: newSlots, historyEntry: entry,
                                          device: try remoteCodec.sealDeviceLabel(deviceLabel)), newMaster: newMaster)
        return RotationResult(epoch: newEpoch, recoveryKeys: recovery, rewrappedBlobs: stats.rewrapped,
                              droppedSlots: dropped, damagedBlobs: stats.damaged, resealedSlots: resealed, tpmNote: tpmNote)
    }

    /// Step 2 (record) and the rest: records `pending` (the new master wrapped under a key only the old
    /// master derives) in the keyslot file, then finishes the rotation and reopens the database.
    func runRotation(_ pending: KeyslotFile.PendingRotation, newMaster: SecureBytes) throws -> RotationStats {
        var pending = pending
        let nonce = SecureRandom.bytes(12)
        let wrapped = try AESGCMKey(try Self.rotationKey(masterKey, vaultId: keys.vaultId))
            .seal(nonce: nonce, secret: newMaster, aad: Self.rotationAAD(vaultId: vaultId, epoch: pending.epoch))
        pending.nonce = Hex.encode(nonce)
        pending.wrappedNewMaster = Hex.encode(wrapped)
        var file = keyslots
        file.body.pendingRotation = pending
        try saveKeyslots(file, macKey: keys.keyslotMacKey, bumpGeneration: false)
        TestHooks.crashPoint("rotate-recorded")
        db.close()
        let (finalFile, newKeys, stats) = try Self.finishRotation(layout: layout, file: file, oldKeys: keys, oldMaster: masterKey,
                                                                  newMaster: newMaster)
        keyslots = finalFile; keys = newKeys; masterKey = newMaster
        db = try Self.openDatabase(layout: layout, keys: newKeys)
        return stats
    }

    /// Finishes an interrupted rotation found at open (any later command does this).
    static func resumeRotation(layout: VaultLayout, file: KeyslotFile, oldMaster: SecureBytes, oldKeys: KeyHierarchy,
                               pending: KeyslotFile.PendingRotation, lock: VaultLock) throws -> Vault {
        guard let nonce = Hex.decode(pending.nonce), let ct = Hex.decode(pending.wrappedNewMaster) else {
            throw VaultError(.integrity, "the keyslot file's pending rotation is damaged")
        }
        let newMaster: SecureBytes
        do {
            newMaster = try AESGCMKey(try rotationKey(oldMaster, vaultId: oldKeys.vaultId))
                .open(nonce: nonce, ciphertextAndTag: ct, aad: rotationAAD(vaultId: file.body.vaultId, epoch: pending.epoch))
        } catch {
            throw VaultError(.integrity, "the keyslot file's pending rotation does not authenticate")
        }
        let (finalFile, newKeys, _) = try finishRotation(layout: layout, file: file, oldKeys: oldKeys, oldMaster: oldMaster, newMaster: newMaster)
        let db = try openDatabase(layout: layout, keys: newKeys)
        return Vault(layout: layout, keyslots: finalFile, keys: newKeys, masterKey: newMaster, db: db, lock: lock)
    }

    struct RotationStats { var rewrapped = 0; var damaged: [String] = [] }

    /// Steps 3–7 (SECURITY.md "Key rotation"), idempotent: copy the database under the new key
    /// while journalling and rewrapping every header (in batches), flush, rename the copy into
    /// place, write the final keyslot file, drop the journal.
    static func finishRotation(layout: VaultLayout, file: KeyslotFile, oldKeys: KeyHierarchy, oldMaster: SecureBytes,
                               newMaster: SecureBytes) throws -> (KeyslotFile, KeyHierarchy, RotationStats) {
        guard let pending = file.body.pendingRotation else { throw VaultError(.internalError, "no rotation pending") }
        let newKeys = try KeyHierarchy(masterKey: newMaster, vaultId: oldKeys.vaultId, epoch: pending.epoch)
        // Blobs sealed under an older epoch (downloaded content written before an earlier
        // rotation) are rewrapped too, with their epoch's key from the key history.
        let oldEpochs = EpochKeys(keyslots: file, keys: oldKeys, masterKey: oldMaster)
        let store = BlobStore(layout: layout, epochs: oldEpochs)
        var stats = RotationStats()
        // Step 3: the database copy under the new key runs on a second core while the headers are
        // rewritten: they touch different files, and both finish before anything commits.
        let copy = layout.databaseFile + ".rekey"
        let needsRekey = (try? newKeys.databaseKey.withUnsafeBytes({ try SQLDatabase(path: layout.databaseFile, rawKey: $0) })) == nil
        let exportFailure = UncheckedSendable(ErrorBox())
        try inParallel({
            guard needsRekey else { return }
            do {
                let old = try openDatabase(layout: layout, keys: oldKeys)
                // Every header changes: no blob's sealed bytes keep their recorded SHA-256; and
                // every header is rewrapped to the new epoch: from here on a header naming an
                // older one is a copy from before the rotation, refused by the readers.
                try BlobsTable(db: old).rewrappedAll(toEpoch: pending.epoch)
                try newKeys.databaseKey.withUnsafeBytes { try old.exportCopy(to: copy, rawKey: $0) }
                old.close()
            } catch { exportFailure.value.error = error }
        }, {
            // Step 3, headers, in batches: journal the current headers of a batch (append + fdatasync), then
            // rewrite each header in place (one 112-byte pwrite at offset 0). A header torn by a crash
            // is restored from the journal on resume.
            let journal = journalPath(layout)
            var saved: [String: [UInt8]] = [:]
            if let bytes = try? POSIX.readFile(journal) {
                for i in stride(from: 0, to: bytes.count - bytes.count % 128, by: 128) {
                    let id = Hex.encode(bytes[i..<i + 16])
                    if saved[id] == nil { saved[id] = Array(bytes[i + 16..<i + 128]) }
                }
            }
            let jfd = Glibc.open(journal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard jfd >= 0 else { throw VaultError(.io, "cannot write the rotation journal: \(POSIX.errnoMessage())") }
            defer { close(jfd) }
            let oldKey = try AESGCMKey(oldKeys.blobWrapKey), newKey = try AESGCMKey(newKeys.blobWrapKey)
            var olderKeys: [UInt32: AESGCMKey] = [oldKeys.epoch: oldKey]
            /// The wrap key of the epoch a header names (nil: an epoch this vault cannot reach).
            func wrapKey(_ header: [UInt8]) -> AESGCMKey {
                guard let epoch = try? SealedBlobHeader(bytes: header).keyEpoch, epoch != oldKeys.epoch, epoch < pending.epoch else { return oldKey }
                if let k = olderKeys[epoch] { return k }
                guard let raw = try? oldEpochs.blobWrapKey(epoch: epoch), let k = try? AESGCMKey(raw) else { return oldKey }
                olderKeys[epoch] = k
                return k
            }
            let scratch = SecureBytes(count: 32)
            var all: [(String, BlobArea)] = []
            for area in [BlobArea.cache, .staging] { all += store.idsOnDisk(area).map { ($0, area) } }
            var firstBatch = true
            // Each batch keeps its files open between the journal's fdatasync and the header writes:
            // large batches mean few fdatasyncs, within the open-file limit (raised to its hard maximum).
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            if limit.rlim_cur < limit.rlim_max {
                limit.rlim_cur = min(limit.rlim_max, 65536)
                setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
                getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            }
            let batchSize = max(64, min(8192, Int(limit.rlim_cur) - 256))
            for start in stride(from: 0, to: all.count, by: batchSize) {
                var batch: [(fd: Int32, path: String, fresh: [UInt8])] = []
                var journalBytes: [UInt8] = []
                defer { for b in batch { close(b.fd) } }
                for (id, area) in all[start..<min(start + batchSize, all.count)] {
                    let path = store.path(id: id, area: area)
                    let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
                    guard fd >= 0 else { stats.damaged.append(id); continue }
                    var header = [UInt8](repeating: 0, count: SealedBlobHeader.size)
                    let n = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
                    let parsed = n == SealedBlobHeader.size ? try? SealedBlobHeader(bytes: header) : nil
                    if let h = parsed, h.keyEpoch == pending.epoch, (try? h.unwrapDataKey(with: newKey)) != nil { close(fd); continue }
                    var fresh = n == SealedBlobHeader.size
                        ? try? SealedBlobHeader.rewrap(headerBytes: header, oldKey: wrapKey(header), newKey: newKey, newEpoch: pending.epoch, scratch: scratch)
                        : nil
                    if fresh == nil, let j = saved[id] {
                        header = j   // a torn write: start again from the journaled header
                        fresh = try? SealedBlobHeader.rewrap(headerBytes: header, oldKey: wrapKey(header), newKey: newKey, newEpoch: pending.epoch, scratch: scratch)
                    }
                    guard let fresh, let idBytes = Hex.decode(id) else { stats.damaged.append(id); close(fd); continue }
                    if saved[id] == nil { journalBytes += idBytes + header; saved[id] = header }
                    batch.append((fd, path, fresh))
                }
                if !journalBytes.isEmpty {
                    try POSIX.writeAll(fd: jfd, journalBytes, path: journal)
                    if fdatasync(jfd) != 0 { throw POSIX.mapWriteError(errno, path: journal) }
                }
                if firstBatch { TestHooks.crashPoint("rotate-journaled"); firstBatch = false }
                for b in batch {
                    let n = b.fresh.withUnsafeBytes { pwrite(b.fd, $0.baseAddress, $0.count, 0) }
                    guard n == b.fresh.count else { throw POSIX.mapWriteError(errno, path: b.path) }
                    stats.rewrapped += 1
                    if stats.rewrapped == 3 { TestHooks.crashPoint("rotate-some-headers") }
                }
            }
            scratch.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
        })
        if let e = exportFailure.value.error { throw e }
        sync()   // step 4
        TestHooks.crashPoint("rotate-headers-done")
        // Step 5: the database copy, fsynced, renamed into place (atomic: either the old file under
        // the old key, or the new one under the new key).
        if needsRekey {
            chmod(copy, 0o600)
            guard rename(copy, layout.databaseFile) == 0 else { throw VaultError(.io, "cannot replace the database: \(POSIX.errnoMessage())") }
            try POSIX.fsyncDirectory(layout.root)
        }
        TestHooks.crashPoint("rotate-db-rekeyed")
        // Step 6, commit: the final keyslot file, authenticated by the new master key.
        var final = file
        final.body.epoch = pending.epoch
        final.body.slots = pending.slots
        final.body.pendingRotation = nil
        final.body.generation = pending.generation ?? (file.body.generation ?? 0) + 1
        final.body.device = pending.device
        if let history = pending.history {
            final.body.history = history   // adopted from a verified envelope (another device rotated)
        } else if let entry = pending.historyEntry {
            final.body.history = (file.body.history ?? []).filter { $0.epoch != entry.epoch } + [entry]
        }
        try POSIX.writeAtomically(try final.serialized(macKey: newKeys.keyslotMacKey), to: layout.keyslotFile)
        TestHooks.crashPoint("rotate-keyslots-written")
        // Step 7, clean up.
        unlink(journalPath(layout))
        return (final, newKeys, stats)
    }
}

/// An error set on another thread, read after it has finished.
final class ErrorBox { var error: Error? }

extension KDFParameters {
    /// The same cost with a new random salt.
    public var withFreshSalt: KDFParameters {
        switch self {
        case .argon2id(let o, let m, _): return .argon2id(opsLimit: o, memLimitBytes: m, salt: SecureRandom.bytes(16))
        case .pbkdf2SHA512(let i, _): return .pbkdf2SHA512(iterations: i, salt: SecureRandom.bytes(16))
        }
    }
}
