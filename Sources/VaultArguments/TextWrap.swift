import Foundation
/// Plain-text layout for help: words wrapped to a width, and two-column lists.
enum TextWrap {
    static let width = 80
    static let column = 26

    /// `text` wrapped to `width`, every line after the first indented by `indent` spaces (the
    /// first by `firstIndent`). Paragraph breaks (blank lines) are kept.
    static func wrap(_ text: String, width: Int = width, indent: Int = 0, firstIndent: Int? = nil) -> String {
        var lines: [String] = []
        for (n, paragraph) in text.components(separatedBy: "\n\n").enumerated() {
            if n > 0 { lines.append("") }
            var line = String(repeating: " ", count: n == 0 ? (firstIndent ?? indent) : indent)
            var empty = true
            for word in paragraph.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
                if !empty && line.count + 1 + word.count > width {
                    lines.append(line)
                    line = String(repeating: " ", count: indent)
                    empty = true
                }
                line += (empty ? "" : " ") + word
                empty = false
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// `  term  text`, the text starting at `column` (on the next line when the term is longer).
    static func item(_ term: String, _ text: String) -> String {
        let head = "  " + term
        let body = wrap(text, indent: column)
        guard head.count + 2 <= column else { return head + "\n" + body }
        return head + String(body.dropFirst(head.count))
    }
}
