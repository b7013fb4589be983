import Foundation

extension Vault {
    /// The vault's compliance with `policy`, item by item.
    /// - Parameter tcti: this machine's TPM (`requireHardwareKey` compares its slot with it).
    public func compliance(with policy: EffectivePolicy, keyringAvailable: Bool, tcti: String? = nil) throws -> [ComplianceItem] {
        var items: [ComplianceItem] = []
        for slot in keyslots.body.slots where slot.type == "password" {
            guard let p = try slot.kdf?.parameters() else { continue }
            do {
                try policy.checkKDF(p)
                items.append(.init(item: "kdf \(slot.id)", compliant: true, detail: "\(slot.kdf!.canonical.split(separator: ":salt").first ?? "") meets the floor"))
            } catch let e as VaultError {
                items.append(.init(item: "kdf \(slot.id)", compliant: false, detail: e.message,
                                   fix: policy.pbkdf2Only.value == true ? "vault key calibrate --kdf pbkdf2 --apply" : "vault key calibrate --apply"))
            }
        }
        if policy.escrowRequired.value == true {
            let has = keyslots.body.slots.contains { $0.type == "escrow" }
            items.append(.init(item: "escrow", compliant: has, detail: has ? "the master key is escrowed" : "the policy requires an escrow slot and there is none",
                               fix: has ? nil : "vault key add-escrow --org-key /etc/vault/org-escrow.pub"))
        }
        if policy.keyring.value == "required" {
            items.append(.init(item: "keyring", compliant: keyringAvailable,
                               detail: keyringAvailable ? "a Secret Service is available" : "the policy requires a keyring and none is available",
                               fix: keyringAvailable ? nil : "start a desktop session with gnome-keyring"))
        }
        if let max = policy.contentBudgetMax.value {
            let set = try settingsTable.value(Self.budgetKey).flatMap(UInt64.init)
            let ok = set.map { $0 <= max } ?? true
            items.append(.init(item: "content budget", compliant: ok,
                               detail: ok ? "within the maximum of \(ByteCount.format(max))" : "the budget \(ByteCount.format(set ?? 0)) exceeds the maximum of \(ByteCount.format(max))",
                               fix: ok ? nil : "vault storage --budget \(max)"))
        }
        if let required = policy.backupExclusion.value, required != "none" {
            let status = try BackupExclusion(layout: layout).status()
            let rank = ["none": 0, "cache": 1, "all": 2]
            let ok = (rank[status.scope] ?? 0) >= (rank[required] ?? 0)
            items.append(.init(item: "backup exclusion", compliant: ok,
                               detail: ok ? "scope \(status.scope) is applied" : "the policy requires scope \(required); applied: \(status.scope)",
                               fix: ok ? nil : "vault backup-exclusion apply\(required == "all" ? " --all" : "")"))
        }
        if policy.requireHardwareKey.value == true {
            let p = HardwareProtection.of(keyslots, tcti: tcti)
            let ok = p.level == "hardware"
            items.append(.init(item: "hardware key", compliant: ok,
                               detail: ok ? "unlocks go through \(p.kind == "FIDO2" ? "a FIDO2 security key" : "this machine's TPM") (\(p.summary))" : "the policy requires a hardware slot: \(p.reason ?? "none")",
                               fix: ok ? nil : "vault key add-tpm\(policy.hardwareKeyPin.value == true ? " --pin" : "")"))
        }
        if policy.hardwareKeyPin.value == true {
            let bare = keyslots.machineBoundSlots.filter { $0.tpm2?.pin != true }.map(\.id)
            let bareFIDO2 = keyslots.fido2Slots.filter { $0.fido2?.pin != true }.map(\.id)
            items.append(.init(item: "hardware key PIN", compliant: bare.isEmpty && bareFIDO2.isEmpty,
                               detail: bare.isEmpty && bareFIDO2.isEmpty ? "every TPM slot has a PIN" + (keyslots.fido2Slots.isEmpty ? "" : ", every FIDO2 slot uses the key's PIN")
                                   : [bare.isEmpty ? nil : "TPM slot(s) \(bare.joined(separator: ", ")) have no PIN",
                                      bareFIDO2.isEmpty ? nil : "FIDO2 slot(s) \(bareFIDO2.joined(separator: ", ")) use no PIN"].compactMap { $0 }.joined(separator: "; "),
                               fix: bare.first.map { "vault key remove \($0), then vault key add-tpm --pin" }
                                   ?? bareFIDO2.first.map { "vault key remove \($0), set a PIN on the key, then vault key add-fido2" }))
        }
        return items
    }
}
