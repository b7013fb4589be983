import Foundation
import VaultAPI
import VaultPrimitives

/// What the server accepts in request fields beyond their JSON types: media types, device ids,
/// versions and explicit nulls. `docs/openapi.yaml` states the same rules (patterns, bounds), and
/// `scripts/check-openapi-behaviour.sh` checks that the two agree.
extension VaultService {
    /// An RFC 6838 `type/subtype` without parameters (the document's `MediaType` pattern).
    static let mediaTypePattern = #"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"#

    /// Throws 400 `invalid_mime_type` unless `value` is a `type/subtype` (`mediaTypePattern`).
    static func validateMediaType(_ value: String) throws {
        func restricted(_ s: Substring) -> Bool {
            guard let first = s.utf8.first, s.utf8.count <= 127, isAlnum(first) else { return false }
            return s.utf8.allSatisfy { isAlnum($0) || Array("!#$&^_.+-".utf8).contains($0) }
        }
        let parts = value.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, restricted(parts[0]), restricted(parts[1]) else {
            throw APIError.badRequest("a mimeType must be a media type such as application/octet-stream (type/subtype, no parameters)",
                                      code: .invalidMimeType)
        }
    }

    /// The media type of a `Content-Type` header (parameters dropped), nil when absent or empty.
    static func mediaType(fromHeader header: String?) throws -> String? {
        guard let header else { return nil }
        let bare = header.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !bare.isEmpty else { return nil }
        try validateMediaType(bare)
        return bare
    }

    /// Throws 400 `invalid_id` for an id given in a body that is empty or holds a NUL (in a path or
    /// query the decoding refuses those already): such an id can never name anything.
    static func validateIds(_ ids: String?...) throws {
        for case let id? in ids where id.isEmpty || id.unicodeScalars.contains("\0") {
            throw APIError.badRequest("an id cannot be empty or contain NUL", code: .invalidId)
        }
    }

    /// `X-Device-Id`: 1–128 bytes of visible ASCII; refused (400 `invalid_device_id`), never cut.
    static func checkDeviceId(_ request: HTTPRequest) throws {
        guard let id = request.header("x-device-id") else { return }
        guard (1...128).contains(id.utf8.count), id.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            throw APIError.badRequest("X-Device-Id must be 1–128 visible ASCII characters", code: .invalidDeviceId)
        }
    }

    /// Sizes, positions, versions and cursors in requests have at most 18 digits (below 10^18,
    /// an exabyte), so each fits a simple pattern in the document and no sum of two overflows.
    static let maxDigits = 18
    /// The largest version a request may name (`versionPattern`).
    static let maxVersion: Int64 = 999_999_999_999_999_999
    /// The largest file size a session may declare.
    static let maxSize: Int64 = 999_999_999_999_999_999

    /// Lowercase hex of a SHA-256 given in a request: 64 ASCII hex digits, either case.
    static func sha256Hex(_ value: String) throws -> String {
        guard value.utf8.count == 64, value.utf8.allSatisfy({ Hex.value(ofDigit: $0) != nil }) else {
            throw APIError.badRequest("sha256 must be 64 hex digits", code: .invalidSHA256)
        }
        return value.lowercased()
    }

    /// Throws 400 unless a `baseVersion` from a body is 1…`maxVersion`.
    static func validateBaseVersion(_ v: Int64?) throws {
        guard let v else { return }
        guard (1...maxVersion).contains(v) else {
            throw APIError.badRequest("baseVersion must be a file version (1…\(maxVersion))", code: .invalidVersion)
        }
    }

    /// Throws 400 `invalid_json` unless `body` is a JSON object in which none of the fields of
    /// `decoded` (its stored properties, named as in JSON) is `null`: every field is either given
    /// with its type or left out, as the document declares no nullable request field. Unknown
    /// fields are ignored, whatever they hold.
    static func requireObjectWithoutNulls(_ body: [UInt8], decoded: Any) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) else { return }
        guard let dict = object as? [String: Any] else {
            throw APIError.badRequest("the body must be a JSON object", code: .invalidJSON)
        }
        let fields = Set(Mirror(reflecting: decoded).children.compactMap(\.label))
        if let field = dict.keys.sorted().first(where: { fields.contains($0) && dict[$0] is NSNull }) {
            throw APIError.badRequest("\(field) cannot be null: leave the field out instead", code: .invalidJSON)
        }
    }

    private static func isAlnum(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x5a).contains(c) || (0x61...0x7a).contains(c)
    }
}
