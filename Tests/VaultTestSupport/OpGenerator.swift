/// Seeded random sequences of valid user operations over nested folders: `mkdir`, `put` of new
/// files and new versions, moves and renames of files and folders (into and out of nested
/// folders), `rm`, `rm -r`, and `sync` at random points. Names come from small pools, so names
/// are reused after moves and removals (the interleavings that break naive outbox replays).
///
/// Shared by the outbox model tests and the multi-device simulation.
public struct OpGenerator {
    public var folderNames = ["A", "B", "C", "D", "sub"]
    public var fileNames = ["e.dat", "f.txt", "g", "h.bin"]
    /// Relative weights of mkdir, put, replace, move, rm, rm -r, sync.
    public var weights: [Double] = [14, 20, 10, 26, 9, 7, 14]
    /// Largest file, in bytes (sizes are uniform from 0).
    public var maxSize = 3000

    public init() {}

    /// `count` operations from `seed`, each valid where it stands, starting from the tree `start`;
    /// with `syncs`, `sync` at random points among them.
    public func generate(seed: UInt64, count: Int, from start: TreeModel = TreeModel(), syncs: Bool = true) -> [ModelOp] {
        var g = SeededGenerator(seed: seed)
        var model = start
        var ops: [ModelOp] = []
        var attempts = 0
        while ops.count < count && attempts < count * 50 {
            attempts += 1
            guard let op = candidate(&g, model), syncs || op != .sync else { continue }
            guard (try? model.apply(op)) != nil else { continue }
            if op == .sync, ops.last == .sync { continue }
            ops.append(op)
        }
        return ops
    }

    private func pick(_ g: inout SeededGenerator) -> Int {
        let total = weights.reduce(0, +)
        var x = Double.random(in: 0..<total, using: &g)
        for (i, w) in weights.enumerated() {
            if x < w { return i }
            x -= w
        }
        return weights.count - 1
    }

    private func content(_ g: inout SeededGenerator) -> ModelContent {
        let size = g.chance(0.1) ? 0 : Int.random(in: 1...maxSize, using: &g)
        return ModelContent(seed: UInt64.random(in: 1...999_999, using: &g), size: size)
    }

    /// One random operation (maybe invalid: `generate` checks it against the model).
    private func candidate(_ g: inout SeededGenerator, _ m: TreeModel) -> ModelOp? {
        let folders = m.folders
        let nonRoot = m.nodes.keys.sorted()
        switch pick(&g) {
        case 0:
            return .mkdir(TreeModel.join(folders.randomElement(using: &g)!, folderNames.randomElement(using: &g)!))
        case 1:
            return .put(TreeModel.join(folders.randomElement(using: &g)!, fileNames.randomElement(using: &g)!), content(&g))
        case 2:
            guard let f = m.files.randomElement(using: &g) else { return nil }
            return .replace(f, content(&g))
        case 3:
            guard let src = nonRoot.randomElement(using: &g) else { return nil }
            let into = folders.filter { !TreeModel.isWithin($0, src) }.randomElement(using: &g)!
            let keep = g.chance(0.4)
            let pool = m.isFolder(src) ? folderNames : fileNames
            let name = keep ? String(src.split(separator: "/").last!) : pool.randomElement(using: &g)!
            return .move(src, TreeModel.join(into, name))
        case 4:
            guard let p = nonRoot.filter({ !m.hasChildren($0) }).randomElement(using: &g) else { return nil }
            return .remove(p)
        case 5:
            guard let p = folders.dropFirst().randomElement(using: &g) else { return nil }
            return .removeRecursive(p)
        default:
            return .sync
        }
    }
}
