/// A file or a folder in the model.
public enum ModelNode: Hashable, Sendable {
    case folder
    case file(ModelContent)
}

/// The tree a vault holds locally, and so the tree the server must hold once the outbox has
/// replayed: paths (`/a/b`, the root implied) to folders and files. It applies `ModelOp`s with
/// the vault's own rules and refuses what the vault would refuse.
public struct TreeModel: Sendable, Equatable {
    public private(set) var nodes: [String: ModelNode] = [:]

    public init() {}

    public static func parent(of path: String) -> String {
        guard let i = path.lastIndex(of: "/"), i != path.startIndex else { return "/" }
        return String(path[..<i])
    }

    public static func join(_ folder: String, _ name: String) -> String { folder == "/" ? "/" + name : folder + "/" + name }

    public func isFolder(_ path: String) -> Bool { path == "/" || nodes[path] == .folder }
    public func exists(_ path: String) -> Bool { path == "/" || nodes[path] != nil }

    /// Every folder, the root first.
    public var folders: [String] { ["/"] + nodes.filter { $0.value == .folder }.map(\.key).sorted() }
    /// Every file.
    public var files: [String] { nodes.filter { $0.value != .folder }.map(\.key).sorted() }

    /// Whether `path` is `folder` or inside it.
    public static func isWithin(_ path: String, _ folder: String) -> Bool {
        folder == "/" || path == folder || path.hasPrefix(folder + "/")
    }

    public func hasChildren(_ folder: String) -> Bool {
        nodes.keys.contains { $0 != folder && Self.isWithin($0, folder) }
    }

    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    /// Applies `op` as the vault would; throws `Refused` for what the vault refuses.
    public mutating func apply(_ op: ModelOp) throws {
        func need(_ ok: Bool, _ why: String) throws { if !ok { throw Refused(description: "\(op): \(why)") } }
        switch op {
        case .mkdir(let p):
            try need(isFolder(Self.parent(of: p)), "no parent folder")
            try need(!exists(p), "exists")
            nodes[p] = .folder
        case let .put(p, c):
            try need(isFolder(Self.parent(of: p)), "no parent folder")
            try need(!exists(p), "exists")
            nodes[p] = .file(c)
        case let .replace(p, c):
            guard case .file? = nodes[p] else { throw Refused(description: "\(op): not a file") }
            nodes[p] = .file(c)
        case let .move(a, b):
            try need(a != "/" && exists(a), "no source")
            try need(isFolder(Self.parent(of: b)) && !exists(b), "bad destination")
            try need(!Self.isWithin(b, a), "into itself")
            for (k, v) in nodes where Self.isWithin(k, a) {
                nodes[k] = nil
                nodes[b + k.dropFirst(a.count)] = v
            }
        case .remove(let p):
            try need(p != "/" && exists(p), "no such node")
            try need(!hasChildren(p), "not empty")
            nodes[p] = nil
        case .removeRecursive(let p):
            try need(p != "/" && isFolder(p), "no such folder")
            for k in nodes.keys where Self.isWithin(k, p) { nodes[k] = nil }
        case .sync:
            break
        }
    }
}
