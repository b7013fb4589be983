import Foundation
import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

extension VaultCommandLine {
    static let contentCommands: [Command] = [
        Command(name: "cat", usage: "vault cat PATH [--revision R]", summary: "write a file's plaintext (or an older version's) to standard output",
                valued: ["revision"], run: runCat),
        Command(name: "get", usage: "vault get PATH LOCAL [--force] [--revision R]", summary: "export a file's plaintext (or an older version's) to a local file",
                valued: ["revision"], flags: ["force"], run: runGet),
        Command(name: "pin", usage: "vault pin PATH [--wait]",
                summary: "keep a file or folder available offline (never evicted); missing content downloads in the background (--wait: now)",
                flags: ["wait"], run: { try runPin($0, $1, true) }),
        Command(name: "unpin", usage: "vault unpin PATH", summary: "let a file or folder's content be evicted again",
                run: { try runPin($0, $1, false) }),
    ]

    static func runCat(_ ctx: CommandContext, _ a: Arguments) throws {
        if let r = a.values["revision"] { return try runCatRevision(ctx, a, r) }
        let path = try a.positional(0, "PATH"); try a.expectPositionals(max: 1)
        if ctx.policy.plaintextExport.value == false && isatty(1) != 1 {
            throw VaultError(.policy, "the policy forbids plaintext export: `vault cat` writes only to a terminal here")
        }
        let vault = try ctx.openVault(lock: .sync, access: .read)   // `vault transfers` may watch the download
        let node = try downloadIfNeeded(ctx, vault, try vault.resolve(path))
        if node.contentState == .stale {
            ctx.out.note("vault: \(try vault.path(of: node)) is an older version: the server has a newer one (`vault evict` it and read again, or pin it: `vault sync` downloads pinned files)")
        }
        struct ReaderGone: Error {}
        var written: UInt64 = 0
        do {
            try vault.readContent(node, checksum: false) { buf in
                var off = 0
                while off < buf.count {
                    let n = write(1, buf.baseAddress! + off, buf.count - off)
                    if n < 0 {
                        if errno == EINTR { continue }
                        if errno == EPIPE { throw ReaderGone() }   // `vault cat | head`: the reader has enough
                        throw VaultError(.io, "cannot write to standard output: \(String(cString: strerror(errno)))")
                    }
                    off += n
                    written += UInt64(n)
                }
            }
        } catch is ReaderGone {
        } catch let e as VaultError where e.kind == .integrity {
            // Bytes already written cannot be taken back: say so, and exit 6.
            let said = written == 0 ? "nothing was written to standard output"
                : "the \(written) byte(s) already written to standard output are not trustworthy: discard them"
            throw VaultError(.integrity, "\(e.message); \(said)", hint: e.hint)
        }
    }

    static func runGet(_ ctx: CommandContext, _ a: Arguments) throws {
        if let r = a.values["revision"] { return try runGetRevision(ctx, a, r) }
        let path = try a.positional(0, "PATH"), local = try a.positional(1, "LOCAL"); try a.expectPositionals(max: 2)
        if ctx.policy.plaintextExport.value == false {
            throw VaultError(.policy, "the policy forbids exporting plaintext files (`vault get`)", hint: "open the file with `vault cat` on a terminal")
        }
        let vault = try ctx.openVault(lock: .sync, access: .read)   // `vault transfers` may watch the download
        let node = try downloadIfNeeded(ctx, vault, try vault.resolve(path))
        var target = local
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: local, isDirectory: &isDir), isDir.boolValue {
            target = (local as NSString).appendingPathComponent(node.name)
        }
        if FileManager.default.fileExists(atPath: target) && !a.flag("force") {
            throw VaultError(.alreadyExists, "\(target) already exists", hint: "add --force to overwrite it")
        }
        // Exported plaintext is the user's explicit request; it is written beside the target and
        // renamed only once complete, authenticated, and of the file's size and SHA-256.
        let tmp = target + ".vault-partial"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError(.io, "cannot write \(tmp): \(String(cString: strerror(errno)))") }
        var done = false
        defer { if !done { unlink(tmp) } }
        let size: UInt64
        do {
            size = try vault.readContent(node) { buf in
                var off = 0
                while off < buf.count {
                    let n = write(fd, buf.baseAddress! + off, buf.count - off)
                    if n < 0 {
                        if errno == EINTR { continue }
                        let e = errno
                        throw VaultError(e == ENOSPC ? .noSpace : .io, "cannot write \(target): \(String(cString: strerror(e)))",
                                         hint: e == ENOSPC ? "free some space on the disk that holds \(target), then run the command again; the file stays in the vault" : nil)
                    }
                    off += n
                }
            }
            guard fsync(fd) == 0 else { throw VaultError(.io, "fsync of \(target) failed") }
            close(fd)
        } catch let e as VaultError where e.kind == .integrity {
            close(fd)
            throw VaultError(.integrity, "\(e.message); \(target) was not written", hint: e.hint)
        } catch { close(fd); throw error }
        guard rename(tmp, target) == 0 else { throw VaultError(.io, "cannot create \(target): \(String(cString: strerror(errno)))") }
        done = true
        if ctx.out.json { try ctx.out.emit(["ok": "true", "path": target]) } else { ctx.out.line("Wrote \(target) (\(ByteCount.format(size)))") }
    }

    static func runPin(_ ctx: CommandContext, _ a: Arguments, _ pinned: Bool) throws {
        let path = try a.positional(0, "PATH"); try a.expectPositionals(max: 1)
        var msg: String
        var missing: (count: Int, bytes: UInt64) = (0, 0)
        var connected = false
        var refused: VaultError?   // the server may not be used now (policy, transport rules)
        do {
            let vault = try ctx.openVault()
            let nodes = try vault.setPinned(path, pinned)
            msg = pinned ? "Pinned \(path) (\(nodes.count) item(s)): kept offline, never evicted." : "Unpinned \(path) (\(nodes.count) item(s)): its content may be evicted."
            connected = try SyncAccount.load(from: vault) != nil
            do { try SyncClient.checkServer(vault: vault, policy: ctx.policy) } catch let e as VaultError { refused = e }
            if pinned {   // content on the server but not on this device
                let absent = nodes.filter { !$0.isFolder && $0.contentState == .notDownloaded && $0.remoteId != nil }
                missing = (absent.count, absent.reduce(0) { $0 + $1.size })
            }
            if pinned && missing.count > 0 && connected && a.flag("wait") {
                let bar = ProgressLine(enabled: !ctx.out.json)
                let client = try ctx.syncClient(vault, say: { bar.clear(); if !ctx.out.json { ctx.out.note($0) } })
                client.onProgress = bar.update
                let done = try client.downloadPinned().downloaded
                bar.clear()
                msg += " Downloaded \(done) file(s)."
                missing = (0, 0)
            }
        }   // the vault (and its lock) is released here, before any background download starts
        if missing.count > 0 {
            let what = "\(missing.count) file(s), \(ByteCount.format(missing.bytes))"
            if !connected {
                msg += " Its content (\(what)) will download once the vault is connected to a server (`vault login`, then `vault sync`)."
            } else if let refused {
                msg += " Its content (\(what)) was not downloaded:"
                if ctx.out.json { try ctx.out.emit(OKResult(ok: false, message: msg + " " + refused.message)) } else { ctx.out.line(msg) }
                throw ctx.out.json ? ReportedFailure(exitCode: refused.exitCode) : refused
            } else if let agent = ctx.agent(), (try? agent.notifyWork()) != nil {
                msg += " The vault agent downloads \(what) in the background; `vault transfers` shows the progress."
            } else if BackgroundDownload.canStart(ctx) {
                let pid = try BackgroundDownload.start(ctx)
                msg += " Downloading \(what) in the background (pid \(pid)); `vault transfers` shows the progress."
            } else {
                msg += " Its content (\(what)) downloads with `vault sync` or `vault pin --wait` (a background download needs the vault unlocked in the keyring, or a password file, and VAULT_BACKGROUND_DOWNLOADS not 0)."
            }
        }
        if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
    }
}
