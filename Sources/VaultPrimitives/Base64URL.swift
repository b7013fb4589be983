import Foundation

/// Base64url without padding (RFC 4648 §5), as JWT and the vault's sealed name tokens use it.
public enum Base64URL {
    /// The unpadded base64url text of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var s = Data(bytes).base64EncodedString()
        s = s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while s.hasSuffix("=") { s.removeLast() }
        return s
    }

    /// The bytes of `text`, or nil unless it is canonical unpadded base64url (only `A–Z a–z 0–9
    /// - _`, and re-encoding the bytes gives `text` back: no padding, no stray low bits).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let s = String(text)
        guard s.utf8.allSatisfy({ (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == 45 || $0 == 95 }),
              s.utf8.count % 4 != 1 else { return nil }
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.utf8.count % 4 != 0 { t += "=" }
        guard let d = Data(base64Encoded: t) else { return nil }
        guard encode(d) == s else { return nil }
        return [UInt8](d)
    }
}
