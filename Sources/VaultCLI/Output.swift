import Foundation
import Synchronization
import VaultCore
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Writing results: text for people, `--json` for scripts; warnings to stderr; colour only on a
/// terminal and never with NO_COLOR. Each `line`, `warn` and `note` is one line: control characters
/// in it (names may hold any, see `DisplayText`) are shown escaped; JSON keeps every string exact.
struct Output {
    let json: Bool
    let color: Bool

    init(json: Bool, environment: [String: String]) {
        self.json = json
        color = isatty(1) == 1 && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }

    /// One line of text on standard output (every control character in it escaped, line breaks too).
    func line(_ s: String) { StandardStream.output.write(DisplayText.escaped(s) + "\n") }

    /// Text already made safe by the caller (listings that escape each name themselves).
    func raw(_ s: String) { StandardStream.output.write(s) }

    func warn(_ s: String) { StandardStream.error.write("warning: " + DisplayText.escaped(s) + "\n") }

    func note(_ s: String) { StandardStream.error.write(DisplayText.escaped(s) + "\n") }

    /// Prints `value` as JSON (sorted keys, one document). Every character `DisplayText` escapes
    /// is a JSON escape (`\u001b`, `\u009b`, `\u202e`): strings stay exact, and nothing reaches a
    /// terminal raw (JSONEncoder itself leaves DEL, C1 controls and bidirectional marks as they are).
    func emit<T: Encodable>(_ value: T) throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let text = String(decoding: try enc.encode(value), as: UTF8.self)
        var out = ""
        for u in text.unicodeScalars {
            // Outside strings JSON is ASCII structure and whitespace, so these occur only inside strings.
            if u.value >= 0x7F && DisplayText.needsEscape(u) {
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(u)
            }
        }
        StandardStream.output.write(out + "\n")
    }

    func dim(_ s: String) -> String { color ? "\u{1b}[2m\(s)\u{1b}[0m" : s }
    func bold(_ s: String) -> String { color ? "\u{1b}[1m\(s)\u{1b}[0m" : s }
}

/// Standard output or standard error, written with `write(2)` in a loop over short writes and
/// EINTR. A reader that went away (`vault transfers | head -1`: EPIPE) ends output on that
/// stream quietly: nothing more is written and the command finishes its work and exits with its
/// own status. Any other write error (a full disk under `> file`) is remembered, and the command
/// then exits 1 saying so (`VaultCommandLine.run`).
final class StandardStream: Sendable {
    static let output = StandardStream(fd: 1)
    static let error = StandardStream(fd: 2)

    let fd: Int32
    /// 0 while writable; EPIPE once the reader left; another errno after a failed write.
    private let failure = Atomic<Int32>(0)

    private init(fd: Int32) { self.fd = fd }

    /// The errno of a failed write other than EPIPE, if any.
    var writeError: Int32? {
        let e = failure.load(ordering: .relaxed)
        return e == 0 || e == EPIPE ? nil : e
    }

    func write(_ s: String) {
        var s = s
        s.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard failure.load(ordering: .relaxed) == 0 else { return }
        do { try POSIXIO.writeAll(fd, bytes) } catch { failure.store(error.rawValue, ordering: .relaxed) }
    }
}
