import Foundation
import VaultArguments
import VaultCore
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// `vault cat`: a file's plaintext on standard output.
struct CatCommand: VaultCommand, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "cat", abstract: "write a file's plaintext to standard output",
                             discussion: "Content not on this device downloads first. The plaintext streams as it is authenticated: when a check fails at the end, standard error says the output is not trustworthy and the exit code is 6. It has no --json (the output is the file).")
    }

    @Argument(help: "the vault file", valueName: "path")
    var path: String
    @OptionGroup var password: PasswordOptions

    func run(_ ctx: CommandContext) throws {
        if ctx.policy.plaintextExport.value == false && isatty(1) != 1 {
            throw VaultError(.policy, "the policy forbids plaintext export: `vault cat` writes only to a terminal here")
        }
        let vault = try ctx.openVault(lock: .sync, access: .read)   // `vault transfers` may watch the download
        let node = try TransfersCommand.downloadIfNeeded(ctx, vault, try vault.resolve(path))
        struct ReaderGone: Error {}
        var written: UInt64 = 0
        do {
            try vault.readContent(node, checksum: false) { buf in
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
}

/// `vault get`: export a file's plaintext to a local file.
struct GetCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "get", abstract: "export a file's plaintext to a local file",
                             discussion: "The file is written beside its target and renamed into place only once it is complete, authenticated, and of the recorded size and SHA-256. Into an existing local folder it keeps its name.")
    }

    @Flag(short: "f", help: "overwrite an existing local file")
    var force = false
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
    }

    func run(_ ctx: CommandContext) throws {
        if ctx.policy.plaintextExport.value == false {
            throw VaultError(.policy, "the policy forbids exporting plaintext files (`vault get`)", hint: "open the file with `vault cat` on a terminal")
        }
        let vault = try ctx.openVault(lock: .sync, access: .read)   // `vault transfers` may watch the download
        let node = try TransfersCommand.downloadIfNeeded(ctx, vault, try vault.resolve(path))
        var target = local
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: local, isDirectory: &isDir), isDir.boolValue {
            target = (local as NSString).appendingPathComponent(node.name)
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
            size = try vault.readContent(node) { buf in
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
        if ctx.out.json { try ctx.out.emit(Result(path: target, size: size)) } else { ctx.out.line("Wrote \(target) (\(ByteCount.format(size)))") }
    }
}
