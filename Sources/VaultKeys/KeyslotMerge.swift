import Foundation

/// Two devices changed the key envelope at once (SECURITY.md "Envelope": a 412 on upload): this
/// device's changes since `base` (the envelope both last agreed on) are re-applied on top of
/// `theirs`. Pure: no I/O, no keys but what `reseal` is given.
///
/// | this device, since base | result |
/// |---|---|
/// | added a slot | added to theirs (ids are random, so never taken) |
/// | replaced a slot (new password) | replaces theirs; if theirs replaced it too, a note says this device's change was kept |
/// | removed a slot | removed from theirs, unless that would leave no password or recovery slot (then kept, with a note) |
/// | rotated (a newer epoch than theirs) | this device's slots (they open the new key); each slot theirs added is carried over if it can be resealed without its secret (escrow), else named in a note; slots theirs removed are removed |
///
/// Without a base (never agreed), theirs' slots are kept and this device's are added or replace
/// those of the same id.
public enum KeyslotMerge {
    public struct Result: Equatable {
        public var slots: [KeyslotFile.Slot]
        /// For the user: slots that could not be carried over, changes that overrode another device's.
        public var notes: [String]
    }

    /// Merges `local` onto `theirs`. `reseal` makes a slot of `theirs` open the new key after this
    /// device rotated (nil when it cannot: its secret is not known here).
    public static func merge(base: KeyslotFile.Body?, local: KeyslotFile.Body, theirs: KeyslotFile.Body,
                             reseal: (KeyslotFile.Slot) throws -> KeyslotFile.Slot?) throws -> Result {
        let baseSlots = Dictionary((base?.slots ?? theirs.slots).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var notes: [String] = []
        if local.epoch > theirs.epoch {
            var out = local.slots
            for slot in theirs.slots where baseSlots[slot.id] == nil {
                if let carried = try reseal(slot) {
                    out.removeAll { $0.id == carried.id }
                    out.append(carried)
                } else {
                    notes.append("slot \(slot.id) (\(slot.type)), added on another device before this device's key rotation, could not be carried over (its secret is not known here): add it again")
                }
            }
            for slot in theirs.slots where baseSlots[slot.id].map({ $0 != slot }) == true && slot.type != "escrow" {
                notes.append("slot \(slot.id) (\(slot.type)) was changed on another device before this device's key rotation; this device's version is kept")
            }
            let removedThere = Set(baseSlots.keys).subtracting(theirs.slots.map(\.id))
            return Result(slots: keepUnlockable(out, removing: removedThere, &notes), notes: notes)
        }
        var out = theirs.slots
        let localIds = Set(local.slots.map(\.id))
        for slot in local.slots {
            let before = baseSlots[slot.id]
            guard before != slot else { continue }   // unchanged here
            if let i = out.firstIndex(where: { $0.id == slot.id }) {
                if let before, out[i] != before, out[i] != slot {
                    notes.append("slot \(slot.id) was changed on another device too; this device's change was kept")
                }
                out[i] = slot
            } else {
                out.append(slot)
            }
        }
        let removedHere = base == nil ? Set<String>() : Set(baseSlots.keys).subtracting(localIds)
        return Result(slots: keepUnlockable(out, removing: removedHere, &notes), notes: notes)
    }

    /// `slots` without `ids`, unless that leaves no slot to unlock with.
    static func keepUnlockable(_ slots: [KeyslotFile.Slot], removing ids: Set<String>, _ notes: inout [String]) -> [KeyslotFile.Slot] {
        let kept = slots.filter { !ids.contains($0.id) }
        guard !ids.isEmpty, !kept.contains(where: { $0.type == "password" || $0.type == "recovery" }) else { return kept }
        notes.append("slot(s) \(ids.sorted().joined(separator: ", ")) were kept: removing them would leave no password or recovery slot")
        return slots
    }
}
