import Foundation
import VaultDigest
import VaultPrimitives

/// A keyslot file or key envelope (SECURITY.md "Keyslot file": body line, `sha256:` line, MAC
/// line) with its body changed by `edit` and its checksum line recomputed, the MAC line kept: what
/// an attacker without the key can make, for the tests that must see it refused.
public func reformattedKeyslotBytes(_ bytes: [UInt8], _ edit: (inout [String: Any]) -> Void) throws -> [UInt8] {
    let lines = bytes.split(separator: 10, omittingEmptySubsequences: false)
    var body = try JSONSerialization.jsonObject(with: Data(lines[0])) as! [String: Any]
    edit(&body)
    let line = [UInt8](try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes]))
    var h = SHA256Hasher()
    h.update(line)
    return line + Array("\nsha256:\(Hex.encode(h.finalize()))\n".utf8) + Array(lines[2]) + [10]
}
