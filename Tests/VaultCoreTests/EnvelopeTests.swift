import Foundation
import VaultTestSupport
import XCTest
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto

/// The key envelope (SECURITY.md "Envelope"), in-process: a second device made from it, the
/// checks an envelope passes, the merge of two devices' slot changes, and catching up with a
/// rotation another device made (its history must lead back to this device's key).
final class EnvelopeTests: VaultTestCase {
    var envelope: [UInt8] { get throws { try vault.envelopeBytes() } }

    /// A second device of the same vault, from the envelope and the password.
    func join(_ name: String = "b") throws -> Vault {
        let bytes = try envelope
        let master = try KeyslotFile.parse(bytes).unlock(password: password)
        return try Vault.join(layout: VaultLayout(root: dir.appendingPathComponent(name).path), envelope: bytes, masterKey: master)
    }

    func testJoinMakesTheSameVaultWithItsOwnDatabase() throws {
        let b = try join()
        XCTAssertEqual(b.vaultId, vault.vaultId)
        XCTAssertEqual(try POSIX.readFile(b.layout.keyslotFile), try envelope, "the keyslot file is the envelope, byte for byte")
        XCTAssertEqual(try b.children(of: Vault.rootId).count, 0)
        let n = try b.put(localFile: try file("x", size: 1000), to: "/x")
        XCTAssertNil(try vault.node(id: n.id), "each device has its own database")
        // A wrong key or another vault's envelope makes nothing.
        let target = VaultLayout(root: dir.appendingPathComponent("c").path)
        XCTAssertThrowsError(try Vault.join(layout: target, envelope: try envelope, masterKey: SecureBytes.random(count: 32)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.root), "nothing left behind")
    }

    func testEnvelopeChecksBeforeAnyKeyWork() throws {
        let good = try envelope
        func refused(_ bytes: [UInt8], policy: EffectivePolicy = .none, _ why: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try EnvelopeCheck.precheck(bytes, policy: policy), why, file: file, line: line) {
                XCTAssertEqual(($0 as? VaultError)?.kind, .integrity, "\(why): \($0)", file: file, line: line)
            }
        }
        XCTAssertNoThrow(try EnvelopeCheck.precheck(good, policy: .none))
        refused(try reformatted(good) { $0["format"] = 0 }, "an older format")
        refused(try reformatted(good) { $0["format"] = 2 }, "a newer format")
        refused(Array(good.prefix(good.count - 10)), "damaged")
        var strict = PolicySettings(); strict.kdfMinArgon2MemoryBytes = 64 << 20
        refused(good, policy: EffectivePolicy(system: strict, user: nil, systemFile: nil, signed: false), "below the policy's KDF floor")
        refused(try reformatted(good) { body in
            var slots = body["slots"] as! [[String: Any]]
            var kdf = slots[0]["kdf"] as! [String: Any]; kdf["memLimitBytes"] = 1 << 50; slots[0]["kdf"] = kdf
            body["slots"] = slots
        }, "KDF parameters out of bounds (a memory bomb)")
    }

    func testVerifyRefusesAnythingButThisVaultsNewerOrSameEnvelope() throws {
        let seen = (try KeyslotFile.parse(try envelope), try envelope)
        XCTAssertNoThrow(try vault.verifyEnvelope(try envelope, seen: seen, policy: .none))
        // Another vault's envelope: a conflict at first contact, a lie once this vault's was seen.
        let other = try Vault.create(layout: VaultLayout(root: dir.appendingPathComponent("o").path), password: password,
                                     kdf: .argon2id(opsLimit: 1, memLimitBytes: 8 << 20, salt: SecureRandom.bytes(16)))
        XCTAssertEqual(kind { try vault.verifyEnvelope(try other.envelopeBytes(), seen: nil, policy: .none) }, .conflict)
        XCTAssertEqual(kind { try vault.verifyEnvelope(try other.envelopeBytes(), seen: seen, policy: .none) }, .integrity)
        // A MAC that does not verify (the body changed without the key).
        XCTAssertEqual(kind { try vault.verifyEnvelope(try reformatted(try envelope) { $0["generation"] = 99 }, seen: seen, policy: .none) }, .integrity)
        // A newer generation of this vault is fine; then the older one is a rollback.
        _ = try vault.addRecoverySlot()
        let newer = (try KeyslotFile.parse(try envelope), try envelope)
        XCTAssertNoThrow(try vault.verifyEnvelope(newer.1, seen: seen, policy: .none))
        XCTAssertEqual(kind { try vault.verifyEnvelope(seen.1, seen: newer, policy: .none) }, .integrity)
        // The same generation with other bytes (a slot swapped by the server) is refused too.
        let swapped = try reformatted(newer.1) { $0["slots"] = Array(($0["slots"] as! [Any]).reversed()) }
        XCTAssertEqual(kind { try vault.verifyEnvelope(swapped, seen: newer, policy: .none) }, .integrity)
    }

    func testTwoDevicesSlotChangesMergeWithoutLosingASlot() throws {
        let b = try join()
        let base = try KeyslotFile.parse(try envelope)
        _ = try vault.addRecoverySlot()                     // A: a recovery slot (uploaded first)
        let theirs = try KeyslotFile.parse(try vault.envelopeBytes())
        _ = try b.addRecoverySlot()                         // B, at once: another one
        try b.changePassword(current: password, new: SecureBytes(copying: Array("b's new password".utf8)),
                             kdf: .argon2id(opsLimit: 1, memLimitBytes: 8 << 20, salt: SecureRandom.bytes(16)))
        let notes = try b.mergeEnvelope(base: base, theirs: theirs)
        XCTAssertEqual(notes, [])
        let merged = b.keyslots.body
        XCTAssertEqual(merged.slots.filter { $0.type == "recovery" }.count, 2, "both recovery slots")
        XCTAssertEqual(merged.slots.filter { $0.type == "password" }.count, 1)
        XCTAssertNoThrow(try b.keyslots.unlock(password: SecureBytes(copying: Array("b's new password".utf8))), "B's new password")
        XCTAssertGreaterThan(merged.generation ?? 0, theirs.body.generation ?? 0)
        // A adopts the merge: same epoch, newer generation, verified.
        XCTAssertNoThrow(try vault.verifyEnvelope(try b.envelopeBytes(), seen: (theirs, try vault.envelopeBytes()), policy: .none))
        try vault.adoptEnvelope(try b.envelopeBytes())
        XCTAssertEqual(vault.keyslots.body.slots, merged.slots)
    }

    func testMergeRules() throws {
        func slot(_ id: String, _ type: String = "recovery", _ n: Int64 = 0) -> KeyslotFile.Slot {
            KeyslotFile.Slot(id: id, type: type, kdf: nil, nonce: "00", wrappedKey: "\(id)-\(n)", createdAt: n)
        }
        func body(_ slots: [KeyslotFile.Slot], epoch: UInt32 = 1) -> KeyslotFile.Body {
            KeyslotFile.Body(format: 1, vaultId: "00", epoch: epoch, slots: slots, generation: 1)
        }
        let p = slot("password-1", "password"), r = slot("recovery-aa"), e = slot("escrow-bb", "escrow")
        let base = body([p, r, e])
        // Removed here, added there: both happen.
        var m = try KeyslotMerge.merge(base: base, local: body([p, e]), theirs: body([p, r, e, slot("recovery-cc")])) { _ in nil }
        XCTAssertEqual(m.slots.map(\.id), ["password-1", "escrow-bb", "recovery-cc"])
        // Changed on both sides: this device's change wins, and says so.
        m = try KeyslotMerge.merge(base: base, local: body([slot("password-1", "password", 2), r, e]),
                                   theirs: body([slot("password-1", "password", 3), r, e])) { _ in nil }
        XCTAssertEqual(m.slots.first?.createdAt, 2); XCTAssertEqual(m.notes.count, 1)
        // Removing what would leave nothing to unlock with is not done.
        m = try KeyslotMerge.merge(base: base, local: body([e]), theirs: body([p, r, e])) { _ in nil }
        XCTAssertEqual(Set(m.slots.map(\.id)), ["password-1", "recovery-aa", "escrow-bb"]); XCTAssertEqual(m.notes.count, 1)
        // This device rotated: its slots; an escrow slot added there is resealed, a recovery slot cannot be.
        m = try KeyslotMerge.merge(base: base, local: body([slot("password-1", "password", 9), slot("recovery-aa", "recovery", 9),
                                                           slot("escrow-bb", "escrow", 9)], epoch: 2),
                                   theirs: body([p, r, e, slot("escrow-dd", "escrow"), slot("recovery-ee")])) { s in
            s.type == "escrow" ? slot(s.id, "escrow", 9) : nil
        }
        XCTAssertEqual(m.slots.map(\.id), ["password-1", "recovery-aa", "escrow-bb", "escrow-dd"])
        XCTAssertEqual(m.notes.count, 1); XCTAssertTrue(m.notes[0].contains("recovery-ee"), m.notes[0])
    }

    /// Another device rotates; this one adopts the new epoch only when the envelope's history
    /// leads back to its own key, and then reads content of both epochs.
    func testCatchingUpWithARotationChecksTheHistoryAndKeepsOldContentReadable() throws {
        let b = try join()
        let old = try b.put(localFile: try file("old", size: 200_000), to: "/old.bin")
        _ = try vault.rotate(password: password)
        let rotated = try vault.envelopeBytes()
        let env = try EnvelopeCheck.precheck(rotated, policy: .none)
        // B learns of it: a newer epoch.
        XCTAssertThrowsError(try b.verifyEnvelope(rotated, seen: nil, policy: .none)) { XCTAssertTrue($0 is EnvelopeRotated) }
        // A key the server made up (its own envelope at a newer epoch, the same password): refused.
        let forged = try forgedRotation(of: b)
        let forgedMaster = try Vault.unlockEnvelope(try KeyslotFile.parse(forged), bytes: forged, password: password, recoveryKey: nil)
        XCTAssertEqual(kind { try b.adoptRotation(envelope: forged, newMaster: forgedMaster) }, .integrity)
        XCTAssertEqual(b.keyslots.body.epoch, 1, "nothing changed")
        // The real one.
        let master = try Vault.unlockEnvelope(env, bytes: rotated, password: password, recoveryKey: nil)
        let before = try b.envelopeBytes()
        let r = try b.adoptRotation(envelope: rotated, newMaster: master)
        // Once epoch 2 was seen, an envelope of epoch 1 (the server rolling the rotation back) is refused.
        let seen = (try KeyslotFile.parse(rotated), rotated)
        XCTAssertEqual(kind { try b.verifyEnvelope(before, seen: seen, policy: .none) }, .integrity)
        XCTAssertEqual(r.epoch, 2)
        XCTAssertEqual(try POSIX.readFile(b.layout.keyslotFile), rotated, "the keyslot file is the envelope")
        var got: [UInt8] = []
        _ = try b.readContent(try b.node(id: old.id)!) { got += $0 }
        XCTAssertEqual(got.count, 200_000)
    }

    /// Content arriving from the server: verified as it arrives, resumed after a kept prefix
    /// (re-verified), published only whole and right; sealed under an older epoch, it opens
    /// through the key history, and a later local rotation rewraps its header too.
    func testSealedDownloadVerifiesResumesAndReadsOlderEpochs() throws {
        let b = try join()
        let n = try vault.put(localFile: try file("f", size: 200_000), to: "/f.bin")
        let blob = try XCTUnwrap(n.localPath)
        let sealed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: vault.blobs.path(id: blob, area: .staging))))
        let record = ContentRecord(blob: blob, device: "a", mime: "application/octet-stream", mtime: 1, sealedSize: Int64(sealed.count),
                                   seq: 1, sha256: n.sha256!, size: 200_000)
        // A rotation on A, caught up on B; the bytes stay sealed under epoch 1.
        _ = try vault.rotate(password: password)
        let rotated = try vault.envelopeBytes()
        _ = try b.adoptRotation(envelope: rotated, newMaster: try KeyslotFile.parse(rotated).unlock(password: password))
        XCTAssertEqual(b.keyslots.body.epoch, 2)

        // Lies: reordered segments, another blob's record, a truncated stream.
        let stride = 65536 + 16, h = SealedBlobHeader.size
        var reordered = Array(sealed[..<h]) + Array(sealed[(h + stride)..<(h + 2 * stride)]) + Array(sealed[h..<(h + stride)])
        reordered += Array(sealed[(h + 2 * stride)...])
        XCTAssertEqual(kind { let d = try b.sealedDownload(record); try reordered.withUnsafeBytes { try d.append($0) }; return d.discard() }, .integrity)
        var other = record; other.blob = RemoteCodec.newId()
        XCTAssertEqual(kind { let d = try b.sealedDownload(other); try sealed.withUnsafeBytes { try d.append($0) }; return d.discard() }, .integrity)
        XCTAssertEqual(kind { () -> BlobRecord in
            let d = try b.sealedDownload(record)
            defer { d.discard() }
            try Array(sealed.prefix(sealed.count - 16)).withUnsafeBytes { try d.append($0) }
            return try d.finish()
        }, .integrity)
        var wrongSHA = record; wrongSHA.sha256 = String(repeating: "0", count: 64)
        XCTAssertEqual(kind { () -> BlobRecord in
            let d = try b.sealedDownload(wrongSHA)
            defer { d.discard() }
            try sealed.withUnsafeBytes { try d.append($0) }
            return try d.finish()
        }, .integrity)
        XCTAssertFalse(FileManager.default.fileExists(atPath: b.blobs.path(id: blob, area: .cache)), "nothing published")

        // A kept prefix that was altered meanwhile is not resumed from.
        do {
            let first = try b.sealedDownload(record)
            try Array(sealed.prefix(150_000)).withUnsafeBytes { try first.append($0) }
            try first.flush()
        }
        let partial = URL(fileURLWithPath: b.layout.tempDirectory + "/" + blob + ".partial")
        var kept = try Data(contentsOf: partial); kept[130_000] ^= 1; try kept.write(to: partial)
        XCTAssertEqual(try b.sealedDownload(record).received, 0, "started over")
        // Interrupted after 100,000 bytes (a kill: the object is dropped), then resumed.
        do {
            let first = try b.sealedDownload(record)
            try Array(sealed.prefix(100_000)).withUnsafeBytes { try first.append($0) }
            try first.flush()
        }
        let resumed = try b.sealedDownload(record)
        XCTAssertEqual(resumed.received, 100_000, "the kept prefix re-verified")
        try Array(sealed[100_000...]).withUnsafeBytes { try resumed.append($0) }
        let published = try resumed.finish()
        XCTAssertEqual(published.keyEpoch, 2, "epoch-1 content is rewrapped to the current epoch as it is published")
        func read(_ v: Vault) throws -> [UInt8] {
            var out: [UInt8] = []
            try v.openBlob(blob).handle.stream { out += $0 }
            return out
        }
        func headerEpoch() throws -> UInt32 {
            try SealedBlobHeader(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: b.blobs.path(id: blob, area: .cache))).prefix(h))).keyEpoch
        }
        XCTAssertEqual(try headerEpoch(), 2)
        XCTAssertEqual(try read(b).count, 200_000, "epoch-1 content opens at epoch 2")
        // The next local rotation rewraps the header to epoch 3.
        _ = try b.rotate(password: password)
        XCTAssertEqual(try headerEpoch(), 3)
        XCTAssertEqual(try read(b).count, 200_000)
    }

    // MARK: Helpers

    func kind(_ body: () throws -> Any) -> VaultError.Kind? {
        do { _ = try body(); return nil } catch let e as VaultError { return e.kind } catch { return nil }
    }

    /// `bytes` with its body changed by `edit`, and its checksum line (not its MAC) recomputed.
    func reformatted(_ bytes: [UInt8], _ edit: (inout [String: Any]) -> Void) throws -> [UInt8] {
        try reformattedKeyslotBytes(bytes, edit)
    }

    /// What a server that chose a key would send `b`: its own master key at the next epoch, a
    /// password slot for the same password, a history entry wrapping a key of its own, MAC'd.
    func forgedRotation(of b: Vault) throws -> [UInt8] {
        let master = SecureBytes.random(count: 32)
        let epoch = b.keyslots.body.epoch + 1
        let keys = try KeyHierarchy(masterKey: master, vaultId: b.keyslots.vaultId, epoch: epoch)
        var file = b.keyslots
        file.body.epoch = epoch
        file.body.generation = (file.body.generation ?? 0) + 5
        file.body.slots = [try KeyslotFile.passwordSlot(id: "password-1", password: password,
                                                        kdf: .argon2id(opsLimit: 1, memLimitBytes: 8 << 20, salt: SecureRandom.bytes(16)),
                                                        masterKey: master, vaultId: b.vaultId)]
        file.body.history = [try KeyslotFile.historyEntry(oldMaster: SecureBytes.random(count: 32), oldEpoch: epoch - 1, newKeys: keys,
                                                          vaultId: b.vaultId)]
        return try file.serialized(macKey: keys.keyslotMacKey)
    }
}
