import Foundation
import VaultArguments
import VaultCore
import VaultCrypto

/// `vault admin`: the organisation's own tools (they work even when the policy is broken).
struct AdminCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "admin", abstract: "organisation tools: key pairs, escrow recovery, policy signing",
                             subcommands: [Keygen.self, Recover.self, SignPolicy.self])
    }

    /// `vault admin keygen`.
    struct Keygen: VaultCommand, ProducesJSON {
        static let obeysPolicy = false
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "keygen", abstract: "write the organisation's escrow (X25519) and signing (Ed25519) key pairs",
                                 discussion: "Writes org-escrow.pub/.key (for `vault key add-escrow`) and org-signing.pub/.key (for policies) into DIR, never over an existing file. Keep the .key files offline.")
        }

        @Option(help: "the folder to write the key files into (created, mode 0700)", valueName: "dir", completion: .directory)
        var out: String
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            var ok = true
            /// The four files written.
            var files: [String]
        }

        func run(_ ctx: CommandContext) throws {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let names = ["org-escrow.pub", "org-escrow.key", "org-signing.pub", "org-signing.key"]
            let paths = names.map { (out as NSString).appendingPathComponent($0) }
            if let taken = paths.first(where: { FileManager.default.fileExists(atPath: $0) }) {
                throw VaultError(.alreadyExists, "\(taken) exists; refusing to overwrite a key", hint: "choose another --out folder; nothing was written")
            }
            let escrow = SealedBox.generateKeyPair()
            let signing = Ed25519.generateKeyPair()
            for (path, key) in zip(paths, [SecureBytes(copying: escrow.publicKey), escrow.secretKey,
                                           SecureBytes(copying: signing.publicKey), signing.secretKey]) {
                try OrgKeyFile.write(key, to: path)
            }
            if ctx.out.json { try ctx.out.emit(Result(files: paths)); return }
            ctx.out.line("Wrote org-escrow.pub/.key (X25519, for `vault key add-escrow`) and org-signing.pub/.key (Ed25519, for policies) to \(out). Keep the .key files offline.")
        }
    }

    /// `vault admin recover`.
    struct Recover: VaultCommand, ProducesJSON {
        static let obeysPolicy = false
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "recover", abstract: "recover a vault with the escrow private key and set a new password",
                                 discussion: "Every other password slot is replaced by the new one.")
        }

        @Option(help: "the organisation's escrow private key (hex)", valueName: "file", completion: .file)
        var orgKey: String
        @OptionGroup var newPassword: NewPasswordOptions
        @OptionGroup var kdf: KDFOptions
        @OptionGroup var output: OutputOptions

        func run(_ ctx: CommandContext) throws {
            let sk = try OrgKeyFile.read(orgKey, count: 32, what: "X25519 private key")
            let (file, _) = try Vault.readKeyslots(ctx.layout)
            let master = try file.unlock(escrowSecretKey: sk)
            let vault = try Vault.open(layout: ctx.layout, masterKey: master)
            let pw = try newPassword.read()
            // `admin` runs under a broken policy (to repair it), but the new slot still meets the
            // KDF floors of a policy that loads.
            let policy = (try? PolicyLoader.load(layout: ctx.layout, environment: ctx.environment)) ?? .none
            try vault.setPassword(pw, kdf: try kdf.parameters(policy: policy), replacingAll: true)
            try KeyCommand.publishEnvelope(ctx, vault, policy: policy)
            let msg = "Recovered the vault with the organisation key and set a new password."
            if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
        }
    }

    /// `vault admin sign-policy POLICY`.
    struct SignPolicy: VaultCommand, ProducesJSON {
        static let obeysPolicy = false
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "sign-policy", abstract: "sign a policy file with the organisation's signing key (writes POLICY.sig)")
        }

        @Argument(help: "the policy file (JSON)", valueName: "policy", completion: .file)
        var policy: String
        @Option(help: "the organisation's Ed25519 signing key (hex)", valueName: "file", completion: .file)
        var signingKey: String
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            var ok = true
            var policy: String
            var signature: String
        }

        func run(_ ctx: CommandContext) throws {
            let sk = try OrgKeyFile.read(signingKey, count: 64, what: "Ed25519 private key")
            let body = try SourceFile(policy, accepting: .regular, what: "the policy").readAll(limit: 1 << 20)
            let sig = try Ed25519.sign(body, secretKey: sk)
            let sigPath = policy + ".sig"
            try Data(sig).base64EncodedString().appending("\n").write(toFile: sigPath, atomically: true, encoding: .utf8)
            if ctx.out.json { try ctx.out.emit(Result(policy: policy, signature: sigPath)) } else { ctx.out.line("Signed \(policy) → \(sigPath)") }
        }
    }
}
