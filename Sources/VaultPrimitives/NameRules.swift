/// The rules for one name in the vault tree, shared by the client (which refuses such a name
/// with its own error) and the server (400 `invalid_name`): not empty, not `.` or `..`, no `/`
/// or NUL, and at most a number of UTF-8 bytes (255 for a plaintext name in the vault; the server
/// allows 1024, room for the sealed token of a 255-byte name).
public enum NameRules {
    /// Why a name is refused.
    public enum Problem: Equatable, Sendable {
        case empty
        case reserved
        case containsSlash
        case containsNUL
        case tooLong(bytes: Int, max: Int)
    }

    /// The first rule `name` breaks, or nil when it is a valid name.
    public static func problem(with name: String, maxBytes: Int) -> Problem? {
        if name.isEmpty { return .empty }
        if name == "." || name == ".." { return .reserved }
        if name.utf8.contains(0x2f) { return .containsSlash }
        if name.utf8.contains(0) { return .containsNUL }
        if name.utf8.count > maxBytes { return .tooLong(bytes: name.utf8.count, max: maxBytes) }
        return nil
    }
}
