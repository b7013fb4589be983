import VaultCrypto
import VaultPrimitives
import VaultTPM

/// The key a `v3` keyring item wraps the master key under (SECURITY.md "The keyring session",
/// `v3`): 32 random bytes sealed in this machine's TPM with no PIN and no PCRs, new at every
/// unlock. The item holds only the sealed object and the wrapped master key, so a copy of it
/// taken off the machine (or read while this TPM is gone) opens nothing.
public struct TPMSessionKey {
    /// The session key as the TPM sealed it (what the item stores).
    public let sealed: TPMSealedObject
    /// The session key itself (locked memory, zeroed when released).
    public let key: SecureBytes

    /// The TCTI configuration `VAULT_TPM_TCTI` names (nil: the device, `/dev/tpmrm0`).
    public static func configuration(_ environment: [String: String]) -> String? {
        environment["VAULT_TPM_TCTI"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Seals a fresh random session key in `tpm`.
    public static func make(in tpm: TPM) throws(TPMError) -> TPMSessionKey {
        let key = SecureBytes.random(count: 32)
        return TPMSessionKey(sealed: try tpm.seal(key, auth: nil, pcrs: .none), key: key)
    }

    /// Unseals `sealed` in the TPM of `tcti`.
    public static func unseal(_ sealed: TPMSealedObject, tcti: String?) throws(TPMError) -> TPMSessionKey {
        let tpm = try TPM(tcti: tcti)
        defer { tpm.close() }
        let key = try tpm.unseal(sealed, auth: nil)
        guard key.count == 32 else { throw .malformed("the sealed session key is not 32 bytes") }
        return TPMSessionKey(sealed: sealed, key: key)
    }

    /// Whether `error` means this TPM cannot be used now (absent, not permitted, not answering),
    /// as opposed to an item that does not open under it (altered, or another machine's).
    static func isUnavailable(_ error: TPMError) -> Bool {
        switch error {
        case .noDevice, .permissionDenied, .unreachable: return true
        default: return false
        }
    }
}
