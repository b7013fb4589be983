internal import CNcurses

/// What a piece of text is, which decides how it looks: colours where the terminal has them and
/// colour is wanted, else only bold, dim and reverse video (`NO_COLOR`).
public enum Style: Int, CaseIterable, Sendable {
    case normal
    /// The title line.
    case header
    /// The status bar.
    case status
    /// A folder's name.
    case folder
    /// Secondary text (content not on this device, dates).
    case dim
    /// Pinned content.
    case pinned
    /// Changes awaiting or in upload.
    case pending
    /// A conflict with the server.
    case conflict
    /// A failure message.
    case error
    /// A confirmation or result message.
    case notice
}

/// The ncurses attributes and colour pair of each style, set up once the screen exists.
struct StyleTable {
    private var table: [Style: (attr_t, Int16)] = [:]
    private let reverse = CNcurses_attr_reverse()

    init(colors: Bool) {
        let bold = CNcurses_attr_bold(), dim = CNcurses_attr_dim(), rev = CNcurses_attr_reverse()
        var plain: [Style: attr_t] = [
            .normal: 0, .header: rev | bold, .status: rev, .folder: bold, .dim: dim, .pinned: 0,
            .pending: 0, .conflict: bold, .error: bold, .notice: 0,
        ]
        var pairs: [Style: Int16] = [:]
        if colors {
            start_color()
            use_default_colors()    // keep the terminal's own background (-1)
            let palette: [(Style, Int16)] = [(.folder, Int16(COLOR_BLUE)), (.pinned, Int16(COLOR_CYAN)),
                                             (.pending, Int16(COLOR_YELLOW)), (.conflict, Int16(COLOR_RED)),
                                             (.error, Int16(COLOR_RED)), (.notice, Int16(COLOR_GREEN))]
            for (i, (style, fg)) in palette.enumerated() {
                let pair = Int16(i + 1)
                init_pair(pair, fg, -1)
                pairs[style] = pair
            }
            plain[.dim] = dim
        }
        for s in Style.allCases { table[s] = (plain[s] ?? 0, pairs[s] ?? 0) }
    }

    /// The attributes and pair for `style`, in reverse video when `highlight` (the selection).
    func attributes(_ style: Style, highlight: Bool = false) -> (attr_t, Int16) {
        let (a, p) = table[style] ?? (0, 0)
        return (highlight ? a | reverse : a, p)
    }
}
