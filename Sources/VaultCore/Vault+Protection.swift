import Foundation
import VaultCrypto
import VaultPrimitives
import VaultTPM

/// This machine's TPM as the keyslots see it: its primary name, derived once, or why the TPM
/// could not be asked. Nothing is unsealed and no PIN is asked.
public struct MachineTPM: Sendable {
    /// The hex primary name, or why it is not known.
    public let primaryName: Result<String, TPMError>

    /// Opens the TPM of `tcti`, derives its primary name (one derivation) and closes it.
    public init(tcti: String?) {
        primaryName = Result { () throws(TPMError) -> String in
            let tpm = try TPM(tcti: tcti)
            defer { tpm.close() }
            return Hex.encode(try tpm.primaryName())
        }
    }

    /// Whether `slot` was sealed by this TPM: "this machine", "another machine", or why the TPM
    /// could not be asked ("unknown: …").
    public func owner(of slot: KeyslotFile.Slot) -> String {
        switch primaryName {
        case .success(let name): return slot.tpm2?.primaryName == name ? "this machine" : "another machine"
        case .failure(let error): return "unknown: \(error.description)"
        }
    }

    /// Why no TPM can be used through `tcti` (nil: one answers). Opens it, derives nothing.
    public static func absence(tcti: String?) -> TPMError? {
        do { try TPM(tcti: tcti).close(); return nil } catch { return error }
    }
}

/// How this vault's key is protected on this machine (`vault status`): by a TPM-held slot or by
/// the password only, and then why.
public struct HardwareProtection: Equatable, Sendable, Encodable {
    /// "hardware" or "software".
    public var level: String
    /// The tpm2 slot of this machine's TPM, and whether a PIN protects it (hardware only).
    public var slot: String?
    public var pin: Bool?
    /// Why the protection is software only: "no TPM found", "no permission to use the TPM",
    /// "no hardware slot enrolled", "the TPM slot belongs to another machine", or the TPM's answer.
    public var reason: String?
    /// Whether a TPM answers here (nil when it was not asked).
    public var tpmPresent: Bool?
    /// "TPM2" or "FIDO2": what holds the hardware slot (hardware only).
    public var kind: String?

    /// One line: `hardware (TPM2, PIN)`, `hardware (FIDO2)` or `software only: security is reduced (…)`.
    public var summary: String {
        if level == "hardware" { return "hardware (\(kind ?? "TPM2")\(pin == true ? ", PIN" : ""))" }
        return "software only: security is reduced (\(reason ?? "no hardware slot"))"
    }

    /// A fido2 slot's protection (the key is not asked: no touch for a status).
    static func fido2(_ file: KeyslotFile) -> HardwareProtection? {
        file.fido2Slots.first.map { HardwareProtection(level: "hardware", slot: $0.id, pin: $0.fido2?.pin, kind: "FIDO2") }
    }

    /// The protection `file` gives on the machine whose TPM `tcti` names: with tpm2 slots one
    /// primary derivation compares them with this TPM; without, the TPM is only opened.
    /// A fido2 slot counts as hardware when this machine's TPM holds no slot (the key itself is
    /// not asked).
    public static func of(_ file: KeyslotFile, tcti: String?) -> HardwareProtection {
        let tpm = ofTPM(file, tcti: tcti)
        guard tpm.level != "hardware", var fido2 = fido2(file) else { return tpm }
        fido2.tpmPresent = tpm.tpmPresent
        return fido2
    }

    /// The protection of `file`'s tpm2 slots alone.
    static func ofTPM(_ file: KeyslotFile, tcti: String?) -> HardwareProtection {
        let slots = file.machineBoundSlots
        guard !slots.isEmpty else {
            let absent = MachineTPM.absence(tcti: tcti)
            return HardwareProtection(level: "software", reason: absent.map(reason) ?? "no hardware slot enrolled: a TPM 2.0 was found (`vault key add-tpm --pin`)",
                                      tpmPresent: absent == nil)
        }
        let tpm = MachineTPM(tcti: tcti)
        switch tpm.primaryName {
        case .failure(let e): return HardwareProtection(level: "software", reason: reason(e), tpmPresent: false)
        case .success:
            guard let slot = slots.first(where: { tpm.owner(of: $0) == "this machine" }) else {
                return HardwareProtection(level: "software", reason: "the TPM slot belongs to another machine (enroll this one: `vault key add-tpm`)", tpmPresent: true)
            }
            return HardwareProtection(level: "hardware", slot: slot.id, pin: slot.tpm2?.pin, tpmPresent: true, kind: "TPM2")
        }
    }

    /// What `vault init` says it found, in one line: the TPM and how to enroll it, or why none is used.
    public static func initNote(tcti: String?) -> (tpmFound: Bool, line: String) {
        guard let absent = MachineTPM.absence(tcti: tcti) else {
            return (true, "A TPM 2.0 was found: `vault key add-tpm --pin` keeps a hardware-held key (until then the password alone protects the vault).")
        }
        let why = reason(absent)
        return (false, why.prefix(1).uppercased() + why.dropFirst() + ": the vault is protected by its password only.")
    }

    /// "no TPM found (…)" and "no permission to use the TPM (…)" as they are; any other answer named.
    public static func reason(_ e: TPMError) -> String {
        switch e {
        case .noDevice, .permissionDenied: return e.description
        default: return "no TPM answers: \(e.description)"
        }
    }
}
