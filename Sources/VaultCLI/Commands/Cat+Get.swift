import Foundation
import VaultArguments
import VaultCore
import VaultPrimitives
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// `vault cat`: a file's plaintext (or an older version's) on standard output.
struct CatCommand: VaultCommand, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "cat", abstract: "write a file's plaintext (or an older version's) to standard output",
                             discussion: "Content not on this device downloads first (with --revision, that version's, from the server). The plaintext streams as it is authenticated: when a check fails at the end, standard error says the output is not trustworthy and the exit code is 6. It has no --json (the output is the file).")
    }

    @Option(help: "read this version instead of the current one (an id from `vault revisions PATH`)", valueName: "id")
    var revision: String?
    @Argument(help: "the vault file", valueName: "path")
    var path: String
    @OptionGroup var password: PasswordOptions

    func run(_ ctx: CommandContext) throws {
        if ctx.policy.plaintextExport.value == false && isatty(1) != 1 {
            throw VaultError(.policy, "the policy forbids plaintext export: `vault cat` writes only to a terminal here")
        }
        // `vault transfers` may watch the download; a revision is downloaded into the vault.
        let vault = try ctx.openVault(lock: .sync, access: revision == nil ? .read : .readWrite)
        let content = try Self.content(ctx, vault, path, revision: revision)
        if content.node.contentState == .stale && revision == nil {
            ctx.out.note("vault: \(try vault.path(of: content.node)) is an older version: the server has a newer one (`vault evict` it and read again, or pin it: `vault sync` downloads pinned files)")
        }
        struct ReaderGone: Error {}
        var written: UInt64 = 0
        do {
            _ = try content.read(false) { buf in
                do throws(Errno) { try POSIXIO.writeAll(1, buf) } catch {
                    if error == .brokenPipe { throw ReaderGone() }   // `vault cat | head`: the reader has enough
                    throw VaultError(.io, "cannot write to standard output: \(error)")
                }
                written += UInt64(buf.count)
            }
        } catch is ReaderGone {
        } catch let e as VaultError where e.kind == .integrity {
            // Bytes already written cannot be taken back: say so, and exit 6.
            let said = written == 0 ? "nothing was written to standard output"
                : "the \(written) byte(s) already written to standard output are not trustworthy: discard them"
            throw VaultError(.integrity, "\(e.message); \(said)", hint: e.hint)
        }
    }

    /// The content `cat` and `get` read: the node at `path`, downloaded first when it is not on this
    /// device, or its revision `revision` (downloaded into a sealed blob like any content, then
    /// read offline), with a reader that streams it authenticated (`checksum`: also check the
    /// recorded size and SHA-256 at the end; a revision is always checked).
    static func content(_ ctx: CommandContext, _ vault: Vault, _ path: String, revision: String?)
        throws -> (node: Node, read: (_ checksum: Bool, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> UInt64) {
        let node = try vault.resolve(path)
        guard let revision else {
            let here = try TransfersCommand.downloadIfNeeded(ctx, vault, node)
            return (here, { checksum, body in try vault.readContent(here, checksum: checksum, body) })
        }
        try revisionHere(ctx, vault, node, revision)
        return (node, { _, body in try vault.readRevision(nodeId: node.id, revision: revision, body) })
    }

    /// Makes revision `revision` of `node` readable here (downloading it when needed).
    static func revisionHere(_ ctx: CommandContext, _ vault: Vault, _ node: Node, _ revision: String) throws {
        let bar = ProgressLine(enabled: true)
        defer { bar.clear() }
        try RevisionAccess.makeLocal(vault, node, revision) {
            let client = try ctx.syncClient(vault, say: { bar.clear(); ctx.out.note($0) })
            client.onProgress = bar.update
            return client
        }
    }
}

/// `vault get`: export a file's plaintext (or an older version's) to a local file.
struct GetCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "get", abstract: "export a file's plaintext (or an older version's) to a local file",
                             discussion: "The file is written beside its target and renamed into place only once it is complete, authenticated, and of the recorded size and SHA-256. Into an existing local folder it keeps its name.")
    }

    @Flag(short: "f", help: "overwrite an existing local file")
    var force = false
    @Option(help: "export this version instead of the current one (an id from `vault revisions PATH`)", valueName: "id")
    var revision: String?
    @Argument(help: "the vault file", valueName: "path")
    var path: String
    @Argument(help: "the local file to write, or an existing local folder", valueName: "local", completion: .file)
    var local: String
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    struct Result: Encodable {
        var ok = true
        /// The local file written.
        var path: String
        var size: UInt64
        /// The version written, when `--revision` asked for one.
        var revision: String?
    }

    func run(_ ctx: CommandContext) throws {
        if ctx.policy.plaintextExport.value == false {
            throw VaultError(.policy, "the policy forbids exporting plaintext files (`vault get`)", hint: "open the file with `vault cat` on a terminal")
        }
        // `vault transfers` may watch the download; a revision is downloaded into the vault.
        let vault = try ctx.openVault(lock: .sync, access: revision == nil ? .read : .readWrite)
        let content = try CatCommand.content(ctx, vault, path, revision: revision)
        var target = local
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: local, isDirectory: &isDir), isDir.boolValue {
            target = (local as NSString).appendingPathComponent(content.node.name)
        }
        if FileManager.default.fileExists(atPath: target) && !force {
            throw VaultError(.alreadyExists, "\(target) already exists", hint: "add --force to overwrite it")
        }
        // Exported plaintext is the user's explicit request; it is written beside the target and
        // renamed only once complete, authenticated, and of the file's size and SHA-256.
        let tmp = target + ".vault-partial"
        let file: POSIXFile
        do { file = try POSIXFile(path: tmp, flags: O_WRONLY | O_CREAT | O_TRUNC) } catch {
            throw VaultError(.io, "cannot write \(tmp): \(error.errno)")
        }
        var done = false
        defer { if !done { unlink(tmp) } }
        let size: UInt64
        do {
            size = try content.read(true) { buf in
                do throws(Errno) { try POSIXIO.writeAll(file.fd, buf) } catch {
                    throw VaultError(error.isNoSpace ? .noSpace : .io, "cannot write \(target): \(error)",
                                     hint: error.isNoSpace ? "free some space on the disk that holds \(target), then run the command again; the file stays in the vault" : nil)
                }
            }
            do { try file.sync() } catch { throw VaultError(.io, "fsync of \(target) failed") }
        } catch let e as VaultError where e.kind == .integrity {
            throw VaultError(.integrity, "\(e.message); \(target) was not written", hint: e.hint)
        }
        guard rename(tmp, target) == 0 else { throw VaultError(.io, "cannot create \(target): \(String(cString: strerror(errno)))") }
        done = true
        if ctx.out.json { try ctx.out.emit(Result(path: target, size: size, revision: revision)); return }
        if let revision {
            ctx.out.line("Wrote revision \(revision) of \(try vault.path(of: content.node)) to \(target) (\(ByteCount.format(size)))")
        } else {
            ctx.out.line("Wrote \(target) (\(ByteCount.format(size)))")
        }
    }
}
