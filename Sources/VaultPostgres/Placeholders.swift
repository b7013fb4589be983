/// `?` placeholders, as the storage layer writes them for both engines, numbered `$1, $2, …` for
/// PostgreSQL. A `?` inside a quoted string ('…'), a quoted identifier ("…") or a `--` comment is
/// left alone (dollar-quoted bodies belong to schema statements, which take no parameters).
enum Placeholders {
    /// `sql` with every parameter `?` replaced by `$n`, and how many there were.
    static func numbered(_ sql: String) -> (sql: String, count: Int) {
        var out = ""
        out.reserveCapacity(sql.utf8.count + 8)
        var n = 0
        var quote: Character?
        var lineComment = false
        var previous: Character = " "
        for c in sql {
            defer { previous = c }
            if lineComment {
                out.append(c)
                if c == "\n" { lineComment = false }
                continue
            }
            if let q = quote {
                out.append(c)
                if c == q { quote = nil }
                continue
            }
            switch c {
            case "'", "\"": quote = c; out.append(c)
            case "-" where previous == "-": lineComment = true; out.append(c)
            case "?": n += 1; out += "$\(n)"
            default: out.append(c)
            }
        }
        return (out, n)
    }
}
