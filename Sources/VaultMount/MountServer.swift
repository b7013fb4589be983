import CFuseShims
import Foundation
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// `vault mount`: serves the vault as a folder at a mountpoint until it is unmounted
/// (`vault unmount`, `fusermount3 -u`) or the process is asked to stop (SIGINT, SIGTERM: it
/// commits what is staged and unmounts). One request at a time, on the calling thread.
public final class MountServer {
    let filesystem: MountFilesystem
    public let mountpoint: String
    let readOnly: Bool

    /// `reopener` gives the vault for each burst of requests (see docs/mount.md "Locking");
    /// `log` gets one line per refused or failed operation (node ids, never names or content).
    /// `policy` governs the connection that fetches content not on this device.
    public init(reopener: VaultReopener, mountpoint: String, readOnly: Bool, policy: EffectivePolicy, log: @escaping (String) -> Void) {
        let gate = VaultGate(reopener: reopener, readOnly: readOnly, log: log)
        filesystem = MountFilesystem(gate: gate, readOnly: readOnly, policy: policy, log: log)
        self.mountpoint = mountpoint
        self.readOnly = readOnly
    }

    /// Confirms the vault opens now (unlocked, not busy), so a mount that cannot serve is
    /// refused before it is made.
    /// - Throws: the vault's own error (`.locked`: run `vault unlock`).
    public func checkVault() throws {
        do throws(FuseErrno) { _ = try filesystem.gate.vault() } catch {
            if error.code == EACCES { throw VaultError(.locked, "the vault is locked", hint: "run `vault unlock`, then `vault mount` again") }
            throw VaultError(.io, "cannot open the vault: \(error.reason ?? "errno \(error.code)")")
        }
        filesystem.gate.close()
    }

    /// Mounts, calls `ready` once the mountpoint serves, and handles requests until the
    /// filesystem is unmounted or SIGINT / SIGTERM arrives.
    /// - Throws: `.io` when the mount cannot be made.
    public func run(ready: () -> Void) throws {
        MountServer.active = filesystem
        defer { MountServer.active = nil }
        let channel = try FuseChannel(handlers: Self.handlers, mountpoint: mountpoint, fsname: "vault", readOnly: readOnly)
        MountServer.stopRequested = 0
        signal(SIGINT, { _ in MountServer.stopRequested = 1 })
        signal(SIGTERM, { _ in MountServer.stopRequested = 1 })
        signal(SIGHUP, SIG_IGN)
        ready()
        var pfd = pollfd(fd: channel.fd, events: Int16(POLLIN), revents: 0)
        while MountServer.stopRequested == 0 {
            pfd.revents = 0
            // Awake every 0.1 s while a burst holds the vault (to release it), else every second
            // (the session check).
            let n = poll(&pfd, 1, filesystem.gate.isOpen ? 100 : 1000)
            if n > 0 {
                if pfd.revents & Int16(POLLIN) != 0 {
                    if !channel.processOne() { break }
                } else if pfd.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                    break
                }
            }
            switch filesystem.gate.tick() {
            case .locked?:
                filesystem.dropReaders()   // and forgets which content the kernel had cached
                channel.invalidate(filesystem.inodes.all)
                // Before the next request: a program told EACCES finds no cached page either
                // (bounded: an invalidation may wait for a read still queued).
                channel.waitForInvalidations(upTo: 0.2)
                filesystem.log("the vault locked: open files return EACCES and the kernel's cache of the mount was dropped")
            case .unlocked?:
                filesystem.log("the vault was unlocked: the mount serves again")
                filesystem.commitPending()
            case .changedBeside?:
                refresh(channel)
            case nil: break
            }
            filesystem.publishCompleted()
        }
        filesystem.commitAll()
        filesystem.gate.close()
        channel.end()
    }

    /// The database changed: what the kernel caches that is no longer so is dropped (names and
    /// inodes, on the channel's helper thread). A busy vault (another command holds it) is tried
    /// again at a later wake-up rather than making the loop wait.
    private func refresh(_ channel: FuseChannel) {
        do throws(FuseErrno) {
            let v = try filesystem.gate.vault(lockTimeout: 0.2)
            let started = Date()
            let drop = try filesystem.changesBeside(v)
            if !drop.isEmpty { channel.invalidate(entries: drop.entries, inodes: drop.inodes) }
            let took = Date().timeIntervalSince(started)
            if took >= 0.1 { filesystem.log("checking \(filesystem.inodes.all.count) inodes after a change beside the mount took \(Int(took * 1000)) ms") }
        } catch {
            if error.code == EBUSY { filesystem.gate.refreshLater() } else if error.code != EACCES {
                filesystem.log("checking the mount against the vault failed: \(error.reason ?? "errno \(error.code)")")
            }
        }
    }

    /// The filesystem the C handlers reach (one mount per process). Unchecked: set before the
    /// session starts and cleared after it ends, and the handlers run only on the loop's thread.
    nonisolated(unsafe) static var active: MountFilesystem?
    /// Set by the SIGINT / SIGTERM handler (a `sig_atomic_t`, the one thing a handler may write),
    /// read by the loop after each wake-up.
    nonisolated(unsafe) static var stopRequested: sig_atomic_t = 0

    // MARK: The C handlers

    /// Runs `body` on the active filesystem, replying with its errno when it throws.
    static func serve(_ req: CFuseShims_Req?, _ body: (MountFilesystem, FuseRequest) throws(FuseErrno) -> Void) {
        guard let req else { return }
        let r = FuseRequest(raw: req)
        guard let fs = active else { r.fail(FuseErrno(EIO)); return }
        do throws(FuseErrno) { try body(fs, r) } catch { r.fail(error) }
    }

    static let handlers: CFuseShims_Handlers = {
        var h = CFuseShims_Handlers()
        h.lookup = { req, parent, name in serve(req) { fs, r throws(FuseErrno) in r.entry(try fs.lookup(parent, try MountFilesystem.name(name!))) } }
        h.getattr = { req, ino in serve(req) { fs, r throws(FuseErrno) in r.attributes(try fs.getattr(ino)) } }
        h.setattr = { req, ino, toSet, _, size, mtime, _, _, _ in
            serve(req) { fs, r throws(FuseErrno) in r.attributes(try fs.setattr(ino, toSet: toSet, size: size, mtime: mtime)) }
        }
        h.mkdir = { req, parent, name, _ in serve(req) { fs, r throws(FuseErrno) in r.entry(try fs.mkdir(parent, try MountFilesystem.name(name!))) } }
        h.unlink = { req, parent, name in
            serve(req) { fs, r throws(FuseErrno) in try fs.remove(parent, try MountFilesystem.name(name!), folder: false); r.ok() }
        }
        h.rmdir = { req, parent, name in
            serve(req) { fs, r throws(FuseErrno) in try fs.remove(parent, try MountFilesystem.name(name!), folder: true); r.ok() }
        }
        h.rename = { req, parent, name, newParent, newName, flags in
            serve(req) { fs, r throws(FuseErrno) in
                try fs.rename(parent, try MountFilesystem.name(name!), newParent, try MountFilesystem.name(newName!), flags: flags)
                r.ok()
            }
        }
        h.open = { req, ino, flags, fi in
            serve(req) { fs, r throws(FuseErrno) in
                let (fh, keep) = try fs.open(ino, flags: flags)
                r.opened(fi!, handle: fh, keepCache: keep)
            }
        }
        h.create = { req, parent, name, _, flags, fi in
            serve(req) { fs, r throws(FuseErrno) in
                let (a, fh) = try fs.create(parent, try MountFilesystem.name(name!), flags: flags)
                r.created(a, fi!, handle: fh)
            }
        }
        h.read = { req, _, size, off, fh in serve(req) { fs, r throws(FuseErrno) in try fs.read(fh, size: size, offset: off) { r.bytes($0) } } }
        h.write = { req, _, buf, size, off, fh in
            serve(req) { fs, r throws(FuseErrno) in
                let data = UnsafeRawBufferPointer(start: buf, count: size)
                let w = try fs.write(fh, data, offset: off)
                r.written(w.count)
                fs.sealAfterReply(w, data)   // the buffer is libfuse's until the next request is read
            }
        }
        h.flush = { req, _, fh in serve(req) { fs, r throws(FuseErrno) in try fs.flush(fh); r.ok() } }
        h.release = { req, _, fh in serve(req) { fs, r throws(FuseErrno) in try fs.release(fh); r.ok() } }
        h.fsync = { req, _, _, fh in serve(req) { fs, r throws(FuseErrno) in try fs.fsync(fh); r.ok() } }
        h.opendir = { req, ino, fi in serve(req) { fs, r throws(FuseErrno) in r.opened(fi!, handle: try fs.opendir(ino)) } }
        h.readdir = { req, _, size, off, fh in
            serve(req) { fs, r throws(FuseErrno) in
                let bytes = try fs.readdir(fh, size: size, offset: Int(off)) { name, a, next, buf in
                    CFuseShims_add_direntry(r.raw, buf.baseAddress?.assumingMemoryBound(to: CChar.self), buf.count, name, a.ino, a.mode, Int64(next))
                }
                bytes.withUnsafeBytes { r.bytes($0) }
            }
        }
        h.readdirplus = { req, _, size, off, fh in
            serve(req) { fs, r throws(FuseErrno) in
                let bytes = try fs.readdir(fh, size: size, offset: Int(off)) { name, a, next, buf in
                    var c = a.packed
                    return CFuseShims_add_direntry_plus(r.raw, buf.baseAddress?.assumingMemoryBound(to: CChar.self), buf.count, name, &c, a.timeout, Int64(next))
                }
                bytes.withUnsafeBytes { r.bytes($0) }
            }
        }
        h.releasedir = { req, _, fh in serve(req) { fs, r throws(FuseErrno) in fs.handles.removeFolder(fh); r.ok() } }
        h.statfs = { req, _ in
            serve(req) { fs, r throws(FuseErrno) in
                let s = try fs.statfs()
                r.statfs(blockSize: s.blockSize, blocks: s.blocks, free: s.free, files: UInt64(fs.inodes.all.count))
            }
        }
        return h
    }()
}
