import Foundation
import VaultCrypto

/// The bytes a password contributes to a key (SECURITY.md "Key hierarchy"): the UTF-8 of the
/// line's Unicode NFC form, so the same password typed on a keyboard that composes "é" (U+00E9)
/// or one that sends "e" + U+0301 opens the same slot. A line that is not valid UTF-8 is used as
/// given (it has no Unicode form to normalise).
///
/// Slots written before vault normalised hold a KEK of the bytes as typed; unlocking tries the
/// NFC form first and then those bytes (only when they differ), and the caller rewraps a slot that
/// opened the old way (`Vault.upgradePasswordSlot`).
///
/// Normalising needs the text as a Swift `String` for a moment (the standard library's
/// normaliser); its storage is wiped right after, but the normaliser's own scratch buffers are
/// not reachable. ASCII passwords, which are always NFC, never take that path.
public enum PasswordText {
    /// The KDF input for `typed`: its NFC form (a new buffer) or `typed` itself when already NFC
    /// or not UTF-8.
    public static func normalized(_ typed: SecureBytes) -> SecureBytes {
        typed.withUnsafeBytes { raw -> SecureBytes in
            if raw.allSatisfy({ $0 < 0x80 }) { return typed }
            guard var text = String(validating: raw, as: UTF8.self) else { return typed }
            defer { wipe(&text) }
            var count = 0
            text._withNFCCodeUnits { _ in count += 1 }
            let out = SecureBytes(count: count)
            out.withUnsafeMutableBytes { dst in
                var i = 0
                text._withNFCCodeUnits { dst[i] = $0; i += 1 }
            }
            if out.constantTimeEquals(typed) { return typed }
            return out
        }
    }

    /// The forms to try when unlocking: the NFC form first, then `typed` as given when it differs.
    public static func candidates(_ typed: SecureBytes) -> [SecureBytes] {
        let nfc = normalized(typed)
        return nfc === typed ? [typed] : [nfc, typed]
    }

    /// Overwrites a uniquely held native string's bytes (best effort: the bytes of a short string
    /// live inline, in a copy this cannot reach).
    private static func wipe(_ s: inout String) {
        s.withUTF8 { p in
            if let base = p.baseAddress { memset(UnsafeMutableRawPointer(mutating: base), 0, p.count) }
        }
    }
}
