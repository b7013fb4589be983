import Foundation
import VaultArguments
import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// What the key commands do with the server when the vault syncs (SECURITY.md "Envelope").
extension KeyCommand {
    /// Uploads the changed key envelope (under `policy`, by default the command's); offline, warns
    /// that the next sync will.
    static func publishEnvelope(_ ctx: CommandContext, _ vault: Vault, policy: EffectivePolicy? = nil) throws {
        let note = try SyncClient.publishEnvelope(vault: vault, policy: policy ?? ctx.policy, say: { ctx.out.note($0) })
        if let note { ctx.out.warn(note) }
    }

    /// `vault key reencrypt`.
    struct Reencrypt: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "reencrypt", abstract: "new data keys for all content (resumable)",
                                 discussion: "On a vault that syncs, content not on this device is downloaded first, then every file goes up again as a new revision and every name and record is sealed again (SECURITY.md \"Re-encryption\": the cost). Offline, the next `vault sync` uploads it.")
        }

        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            /// Blobs sealed again under new data keys.
            var reencrypted: Int
            /// Changes sent to the server (0 for a vault that does not sync, or offline).
            var uploaded: Int
        }

        func run(_ ctx: CommandContext) throws {
            let vault = try ctx.openVault()
            let client = try SyncAccount.load(from: vault) == nil ? nil : try ctx.syncClient(vault, say: { ctx.out.note($0) })
            if let client {
                let n = try client.downloadAllMissing()
                if n > 0 { ctx.out.note("downloaded \(n) file(s) that were not on this device, to upload them re-encrypted") }
            }
            let isTTY = isatty(2) == 1
            let r = try vault.reencrypt(resealRemote: client != nil) { done, total in
                if isTTY { StandardStream.error.write("\rre-encrypting \(done)/\(total)") }
            }
            if isTTY { StandardStream.error.write("\n") }
            var pushed: PushSummary?
            if let client {
                do { pushed = try client.push() } catch let e as VaultError where e.kind == .io {
                    ctx.out.warn("the server could not be reached (\(e.message)); `vault sync` uploads the re-encrypted content")
                }
            }
            if ctx.out.json { try ctx.out.emit(Result(reencrypted: r.done, uploaded: pushed?.done ?? 0)); return }
            ctx.out.line("Re-encrypted \(r.done) blob(s) under new data keys."
                         + (pushed.map { " Sent \($0.done) change(s) to the server (new revisions, names and records sealed again)." } ?? ""))
        }
    }
}
