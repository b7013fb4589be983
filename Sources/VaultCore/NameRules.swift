import VaultPrimitives

/// Names and paths in the vault tree: the shared `NameRules` with at most 255 bytes a name, and
/// the vault's own error.
extension NameRules {
    /// The longest name in the vault tree, in bytes of UTF-8.
    public static let maxVaultNameBytes = 255

    /// Throws `.invalidName` for a name the tree refuses: empty, `.`, `..`, containing `/` or NUL,
    /// or longer than 255 bytes of UTF-8.
    public static func validate(_ name: String) throws {
        guard let problem = problem(with: name, maxBytes: maxVaultNameBytes) else { return }
        let shown = name.unicodeScalars.map { $0.value == 0 ? "\\0" : String($0) }.joined()
        let why: String
        switch problem {
        case .empty: why = "a name cannot be empty"
        case .reserved: why = "'.' and '..' are reserved"
        case .containsSlash: why = "a name cannot contain '/'"
        case .containsNUL: why = "a name cannot contain a NUL byte"
        case .tooLong(let bytes, let max): why = "a name is at most \(max) bytes (this one has \(bytes))"
        }
        throw VaultError(.invalidName, "invalid name '\(shown.prefix(80))': \(why)")
    }

    /// The components of a vault path ("/a/b", "a/b/"); each component is validated.
    public static func components(_ path: String) throws -> [String] {
        if path.unicodeScalars.contains(where: { $0.value == 0 }) {
            throw VaultError(.invalidName, "invalid path: it contains a NUL byte")
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        for p in parts { try validate(p) }
        return parts
    }

    /// A MIME type from the file extension (for the server; content is never sniffed).
    public static func mimeType(forName name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return mimeTypes[ext] ?? "application/octet-stream"
    }

    private static let mimeTypes: [String: String] = [
        "txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "json": "application/json",
        "pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "gif": "image/gif", "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "html": "text/html", "mp4": "video/mp4", "mp3": "audio/mpeg", "doc": "application/msword",
    ]
}
