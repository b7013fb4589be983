/// The content of a file in the model: `size` bytes derived from `seed` (so an operation list
/// stays one short line).
public struct ModelContent: Hashable, Sendable, CustomStringConvertible {
    public var seed: UInt64
    public var size: Int

    public init(seed: UInt64, size: Int) { self.seed = seed; self.size = size }

    /// The bytes: the same for the same seed and size, everywhere.
    public func bytes() -> [UInt8] {
        var g = SeededGenerator(seed: seed)
        var out = [UInt8](repeating: 0, count: size)
        var i = 0
        while i < size {
            var word = g.next()
            for _ in 0..<8 where i < size { out[i] = UInt8(truncatingIfNeeded: word); word >>= 8; i += 1 }
        }
        return out
    }

    /// `seed:size`, as in an operation list.
    public var description: String { "\(seed):\(size)" }
}

/// One thing a user does to a vault, as the model and the vault both apply it. Paths are vault
/// paths (`/a/b`). `description` is the command-like form used in one-line reproductions.
public enum ModelOp: Hashable, Sendable, CustomStringConvertible {
    /// `mkdir PATH` (the parent exists, the name is free).
    case mkdir(String)
    /// `put LOCAL PATH`: a new file (the parent exists, the name is free).
    case put(String, ModelContent)
    /// `put --replace LOCAL PATH`: a new version of an existing file.
    case replace(String, ModelContent)
    /// `mv SRC DEST`: DEST is a free path in an existing folder not inside SRC.
    case move(String, String)
    /// `rm PATH`: a file or an empty folder.
    case remove(String)
    /// `rm -r PATH`: a folder with everything in it.
    case removeRecursive(String)
    /// `sync`.
    case sync

    public var description: String {
        switch self {
        case .mkdir(let p): return "mkdir \(p)"
        case let .put(p, c): return "put \(p) \(c)"
        case let .replace(p, c): return "replace \(p) \(c)"
        case let .move(a, b): return "mv \(a) \(b)"
        case .remove(let p): return "rm \(p)"
        case .removeRecursive(let p): return "rm-r \(p)"
        case .sync: return "sync"
        }
    }

    /// Joins operations into one line (`mkdir /a; put /a/x 7:120; sync`).
    public static func line(_ ops: [ModelOp]) -> String { ops.map(\.description).joined(separator: "; ") }

    /// Parses a line made by `line` (names in the generator's pools never hold `;` or spaces).
    public static func parse(_ line: String) -> [ModelOp]? {
        var out: [ModelOp] = []
        for raw in line.split(separator: ";") {
            let w = raw.split(separator: " ").map(String.init)
            guard let verb = w.first else { continue }
            func content(_ s: String) -> ModelContent? {
                let p = s.split(separator: ":")
                guard p.count == 2, let seed = UInt64(p[0]), let size = Int(p[1]) else { return nil }
                return ModelContent(seed: seed, size: size)
            }
            switch (verb, w.count) {
            case ("mkdir", 2): out.append(.mkdir(w[1]))
            case ("put", 3): guard let c = content(w[2]) else { return nil }; out.append(.put(w[1], c))
            case ("replace", 3): guard let c = content(w[2]) else { return nil }; out.append(.replace(w[1], c))
            case ("mv", 3): out.append(.move(w[1], w[2]))
            case ("rm", 2): out.append(.remove(w[1]))
            case ("rm-r", 2): out.append(.removeRecursive(w[1]))
            case ("sync", 1): out.append(.sync)
            default: return nil
            }
        }
        return out
    }
}
