import Foundation
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// A local folder tree as `vault put -r` imports it, read with `opendir`/`readdir`/`lstat`
/// only: names are taken as the bytes the file system holds, so a name that is not UTF-8 is
/// reported (and skipped) instead of aborting the walk. Nothing is opened here; files are opened
/// one by one, without blocking, while they are sealed.
///
/// What is imported: folders and regular files with valid names. What is skipped, and reported:
/// names that are not UTF-8 or that the vault refuses (`NameRules`), entries that cannot be read
/// (both count as failures), symbolic links (not followed) and FIFOs, sockets and devices (not
/// content; skipped by design).
public struct LocalTree: Sendable {
    /// A regular file to import.
    public struct File: Sendable {
        /// The path relative to the tree's root, `/`-separated.
        public var relativePath: String
        /// The local path.
        public var path: String
        public var size: UInt64
    }

    /// An entry left out, and why.
    public struct Skipped: Sendable, Encodable {
        /// The local path as shown (escaped, see `DisplayText`).
        public var path: String
        public var reason: String
        /// The error kind when the entry could not be imported (`invalidName`, `io`, `conflict`,
        /// …); nil when it is skipped by design (a symbolic link, a FIFO, a socket, a device).
        public var failure: String?

        init(path: String, reason: String, failure: VaultError.Kind?) {
            self.path = path; self.reason = reason; self.failure = failure?.rawValue
        }
    }

    public let root: String
    /// Folders below the root, relative, parents before children.
    public private(set) var folders: [String] = []
    public private(set) var files: [File] = []
    public private(set) var skipped: [Skipped] = []

    /// Walks the tree at `root` (a folder; a symbolic link to one is followed, links inside are not).
    public static func scan(_ root: String) throws -> LocalTree {
        var st = stat()
        guard stat(root, &st) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw VaultError(.notFound, "\(DisplayText.escaped(root)) does not exist") }
            throw VaultError(.io, "cannot read \(DisplayText.escaped(root)): \(POSIX.errnoMessage())")
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw VaultError(.usage, "\(DisplayText.escaped(root)) is \(SourceFile.describe(mode: st.st_mode)), not a folder",
                             hint: "`vault put -r` imports a folder; use `vault put FILE` for a file")
        }
        var tree = LocalTree(root: root)
        try tree.walk(root, relative: "", isRoot: true)
        return tree
    }

    init(root: String) { self.root = root }

    /// Records a file that could not be imported after all (it vanished, became unreadable, or
    /// changed while it was read).
    mutating func skip(_ file: File, _ error: VaultError) {
        skipped.append(Skipped(path: DisplayText.escaped(file.path), reason: error.message, failure: error.kind))
    }

    private mutating func walk(_ dir: String, relative: String, isRoot: Bool) throws {
        guard let d = opendir(dir) else {
            let why = POSIX.errnoMessage()
            if isRoot { throw VaultError(.io, "cannot read the folder \(DisplayText.escaped(dir)): \(why)") }
            skipped.append(Skipped(path: DisplayText.escaped(dir), reason: "cannot read the folder: \(why)", failure: .io))
            return
        }
        var names: [[UInt8]] = []
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != [46] && name != [46, 46] { names.append(name) }
        }
        closedir(d)
        for bytes in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            guard let name = String(validating: bytes, as: UTF8.self) else {
                skipped.append(Skipped(path: DisplayText.escaped(dir + "/") + DisplayText.escaped(bytes: bytes),
                                       reason: "the name is not valid UTF-8 (vault names are UTF-8); rename it, for example with `convmv`",
                                       failure: .invalidName))
                continue
            }
            let path = dir.hasSuffix("/") ? dir + name : dir + "/" + name
            let rel = relative.isEmpty ? name : relative + "/" + name
            do { try NameRules.validate(name) } catch let e as VaultError {
                skipped.append(Skipped(path: DisplayText.escaped(path), reason: e.message, failure: e.kind))
                continue
            }
            var st = stat()
            guard lstat(path, &st) == 0 else {
                skipped.append(Skipped(path: DisplayText.escaped(path), reason: "cannot read it: \(POSIX.errnoMessage())", failure: .io))
                continue
            }
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                folders.append(rel)
                try walk(path, relative: rel, isRoot: false)
            case S_IFREG:
                files.append(File(relativePath: rel, path: path, size: UInt64(max(0, st.st_size))))
            case S_IFLNK:
                skipped.append(Skipped(path: DisplayText.escaped(path), reason: "a symbolic link (links are not followed)", failure: nil))
            default:
                skipped.append(Skipped(path: DisplayText.escaped(path), reason: "\(SourceFile.describe(mode: st.st_mode)) (only files and folders are imported)", failure: nil))
            }
        }
    }
}
