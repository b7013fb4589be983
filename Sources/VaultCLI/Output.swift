import Foundation
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// Writing results: text for people, `--json` for scripts; warnings to stderr; colour only on a
/// terminal and never with NO_COLOR.
struct Output {
    let json: Bool
    let color: Bool

    init(json: Bool, environment: [String: String]) {
        self.json = json
        color = isatty(1) == 1 && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }

    func line(_ s: String) { FileHandle.standardOutput.write(Data((s + "\n").utf8)) }

    func warn(_ s: String) { FileHandle.standardError.write(Data(("warning: " + s + "\n").utf8)) }

    func note(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }

    /// Prints `value` as JSON (sorted keys, one document).
    func emit<T: Encodable>(_ value: T) throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        line(String(decoding: try enc.encode(value), as: UTF8.self))
    }

    func dim(_ s: String) -> String { color ? "\u{1b}[2m\(s)\u{1b}[0m" : s }
    func bold(_ s: String) -> String { color ? "\u{1b}[1m\(s)\u{1b}[0m" : s }
}

/// A simple `{"ok": true, ...}` JSON result.
struct OKResult: Encodable {
    var ok = true
    var message: String
}
