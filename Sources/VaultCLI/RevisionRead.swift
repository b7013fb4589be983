import Foundation
import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// `vault cat --revision R PATH` and `vault get --revision R PATH LOCAL`: an older version's
/// content, downloaded into a sealed blob like any content (and then read offline), authenticated
/// segment by segment and checked against its content record's size and SHA-256.
extension VaultCommandLine {
    /// Makes revision `revision` of `node` readable here (downloading it when needed).
    static func revisionHere(_ ctx: CommandContext, _ vault: Vault, _ node: Node, _ revision: String) throws {
        guard try vault.revisionBlob(nodeId: node.id, revision: revision) == nil else { return }
        guard !vault.isReadOnly, try SyncAccount.load(from: vault) != nil else {
            _ = try vault.openRevision(nodeId: node.id, revision: revision)   // says why not
            return
        }
        let bar = ProgressLine(enabled: true)
        let client = try ctx.syncClient(vault, say: { bar.clear(); ctx.out.note($0) })
        client.onProgress = bar.update
        defer { bar.clear() }
        try client.downloadRevision(node, revision: revision)
    }

    static func runCatRevision(_ ctx: CommandContext, _ a: Arguments, _ revision: String) throws {
        let path = try a.positional(0, "PATH"); try a.expectPositionals(max: 1)
        if ctx.policy.plaintextExport.value == false && isatty(1) != 1 {
            throw VaultError(.policy, "the policy forbids plaintext export: `vault cat` writes only to a terminal here")
        }
        let vault = try ctx.openVault(lock: .sync)
        let node = try vault.resolve(path)
        try revisionHere(ctx, vault, node, revision)
        var written: UInt64 = 0
        do {
            try vault.readRevision(nodeId: node.id, revision: revision) { buf in
                try writeAll(1, buf, to: "standard output")
                written += UInt64(buf.count)
            }
        } catch let e as VaultError where e.kind == .integrity {
            let said = written == 0 ? "nothing was written to standard output"
                : "the \(written) byte(s) already written to standard output are not trustworthy: discard them"
            throw VaultError(.integrity, "\(e.message); \(said)", hint: e.hint)
        }
    }

    static func runGetRevision(_ ctx: CommandContext, _ a: Arguments, _ revision: String) throws {
        let path = try a.positional(0, "PATH"), local = try a.positional(1, "LOCAL"); try a.expectPositionals(max: 2)
        if ctx.policy.plaintextExport.value == false {
            throw VaultError(.policy, "the policy forbids exporting plaintext files (`vault get`)", hint: "open the file with `vault cat` on a terminal")
        }
        let vault = try ctx.openVault(lock: .sync)
        let node = try vault.resolve(path)
        try revisionHere(ctx, vault, node, revision)
        var target = local
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: local, isDirectory: &isDir), isDir.boolValue {
            target = (local as NSString).appendingPathComponent(node.name)
        }
        if FileManager.default.fileExists(atPath: target) && !a.flag("force") {
            throw VaultError(.alreadyExists, "\(target) already exists", hint: "add --force to overwrite it")
        }
        let tmp = target + ".vault-partial"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError(.io, "cannot write \(tmp): \(String(cString: strerror(errno)))") }
        var done = false
        defer { if !done { unlink(tmp) } }
        let size: UInt64
        do {
            size = try vault.readRevision(nodeId: node.id, revision: revision) { try writeAll(fd, $0, to: target) }
            guard fsync(fd) == 0 else { throw VaultError(.io, "fsync of \(target) failed") }
            close(fd)
        } catch let e as VaultError where e.kind == .integrity {
            close(fd)
            throw VaultError(.integrity, "\(e.message); \(target) was not written", hint: e.hint)
        } catch { close(fd); throw error }
        guard rename(tmp, target) == 0 else { throw VaultError(.io, "cannot create \(target): \(String(cString: strerror(errno)))") }
        done = true
        if ctx.out.json { try ctx.out.emit(["ok": "true", "path": target, "revision": revision]) } else {
            ctx.out.line("Wrote revision \(revision) of \(try vault.path(of: node)) to \(target) (\(ByteCount.format(size)))")
        }
    }

    /// Writes all of `buf` to `fd` (EINTR retried; a full disk said clearly).
    static func writeAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer, to what: String) throws {
        var off = 0
        while off < buf.count {
            let n = write(fd, buf.baseAddress! + off, buf.count - off)
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                throw VaultError(e == ENOSPC ? .noSpace : .io, "cannot write \(what): \(String(cString: strerror(e)))")
            }
            off += n
        }
    }
}
