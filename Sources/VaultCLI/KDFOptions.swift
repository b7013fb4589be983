import Foundation
import VaultArguments
import VaultCore
import VaultCrypto

/// The key derivation options of the commands that make a password slot (`init`, `key passwd`,
/// `key calibrate`, `admin recover`, `backup import`): an algorithm and its cost, calibrated to a
/// time where no cost is given, never below the policy's floor.
struct KDFOptions: ParsableArguments {
    @Option(help: "key derivation function for the password slot (default: argon2id, or pbkdf2 under a pbkdf2Only policy)")
    var kdf: KDFName?
    @Option(help: "calibrate the cost so that one unlock takes about this many seconds on this machine (0 to 60; default 0.5)",
            valueName: "seconds")
    var kdfTime: Double?
    @Option(help: "Argon2id passes (1 to 64), instead of calibrating", valueName: "n")
    var kdfOps: UInt64?
    @Option(help: "Argon2id memory, 8K to 4G (default 64M)", valueName: "size")
    var kdfMem: ByteSize?
    @Option(help: "PBKDF2-HMAC-SHA512 iterations (1000 to 100000000), instead of calibrating", valueName: "n")
    var pbkdf2Iterations: UInt32?

    /// Costs a keyslot can hold (a reader refuses others): `KDFParameters`' ranges.
    func validate() throws {
        if let t = kdfTime, !(t > 0 && t <= 60) { throw ValidationError("--kdf-time must be seconds between 0 and 60") }
        try Self.checkArgon2id(ops: kdfOps, memory: kdfMem?.bytes)
        let r = KDFParameters.pbkdf2IterationsRange
        if let i = pbkdf2Iterations, !r.contains(i) {
            throw ValidationError("--pbkdf2-iterations must be a whole number from \(r.lowerBound) to \(r.upperBound)")
        }
        if kdf == .pbkdf2 && (kdfOps != nil || kdfMem != nil) {
            throw ValidationError("--kdf-ops and --kdf-mem are Argon2id costs; they do not go with --kdf pbkdf2")
        }
        if kdf == .argon2id && pbkdf2Iterations != nil {
            throw ValidationError("--pbkdf2-iterations is a PBKDF2 cost; it does not go with --kdf argon2id")
        }
    }

    /// `--kdf-ops` and `--kdf-mem` within what a keyslot (or a backup bundle) may hold.
    static func checkArgon2id(ops: UInt64?, memory: UInt64?) throws {
        let r = KDFParameters.argon2idOpsRange
        if let ops, !r.contains(ops) { throw ValidationError("--kdf-ops must be a whole number from \(r.lowerBound) to \(r.upperBound)") }
        if let memory, !KDFParameters.argon2idMemoryRange.contains(memory) { throw ValidationError("--kdf-mem must be a size from 8K to 4G") }
    }

    /// Whether any KDF option was given.
    var asked: Bool { kdf != nil || kdfTime != nil || kdfOps != nil || kdfMem != nil || pbkdf2Iterations != nil }

    /// KDF parameters from the options, calibrated where not given, never below the policy floor.
    /// `algorithm` is the one to use when `--kdf` does not name one (default: Argon2id, or PBKDF2
    /// under a `pbkdf2Only` policy). Parameters a keyslot could not hold (a reader refuses them)
    /// are refused: options outside the bounds in `validate()`, a policy floor above them here.
    func parameters(policy: EffectivePolicy = .none, algorithm: String? = nil) throws -> KDFParameters {
        let params = try requested(policy: policy, algorithm: algorithm)
        try policy.checkKDF(params)
        if let problem = params.storageProblem {
            throw VaultError(.policy, "the policy's KDF floor asks for more than a keyslot can hold (\(problem))",
                             hint: "ask your administrator to lower kdfMinArgon2Ops, kdfMinArgon2MemoryBytes or kdfMinPBKDF2Iterations")
        }
        return params
    }

    private func requested(policy: EffectivePolicy, algorithm: String?) throws -> KDFParameters {
        let argonAsked = kdfOps != nil || kdfMem != nil
        let alg = kdf?.rawValue ?? algorithm ?? (policy.pbkdf2Only.value == true && !argonAsked ? "pbkdf2" : "argon2id")
        switch alg {
        case "argon2id":
            if let ops = kdfOps {
                return .argon2id(opsLimit: ops, memLimitBytes: kdfMem?.bytes ?? (64 << 20), salt: SecureRandom.bytes(16))
            }
            return KDF.calibrateArgon2id(targetSeconds: kdfTime ?? 0.5, memLimitBytes: max(kdfMem?.bytes ?? (64 << 20), policy.kdfMinArgon2MemoryBytes.value ?? 0),
                                         minOpsLimit: max(2, policy.kdfMinArgon2Ops.value ?? 0))
        case "pbkdf2", "pbkdf2-sha512":
            if let i = pbkdf2Iterations { return .pbkdf2SHA512(iterations: i, salt: SecureRandom.bytes(16)) }
            return KDF.calibratePBKDF2(targetSeconds: kdfTime ?? 0.5, minIterations: max(210_000, policy.kdfMinPBKDF2Iterations.value ?? 0))
        default:
            throw VaultError(.usage, "unknown KDF '\(alg)'", hint: "use argon2id (default) or pbkdf2")
        }
    }

    /// `argon2id, 3 passes, 64.0 MiB`.
    static func describe(_ p: KDFParameters) -> String {
        switch p {
        case .argon2id(let ops, let mem, _): return "argon2id, \(ops) passes, \(ByteCount.format(mem))"
        case .pbkdf2SHA512(let it, _): return "pbkdf2-sha512, \(it) iterations"
        }
    }
}

/// `--new-password-file`: the new password of `key passwd`, `admin recover` and `backup import`.
struct NewPasswordOptions: ParsableArguments {
    @Option(help: "read the new password from the first line of FILE (else it is asked twice on the terminal)",
            valueName: "file", completion: .file)
    var newPasswordFile: String?

    /// The new password: from --new-password-file, or asked twice on the terminal.
    func read() throws -> SecureBytes {
        let src = newPasswordFile.map { f in PasswordSource(isExplicit: true) { _ in try PasswordInput.fromFile(f) } }
            ?? PasswordSource(isExplicit: false) { try PasswordInput.fromTerminal($0) }
        let pw = try src.read("New password: ")
        if !src.isExplicit {
            guard pw.constantTimeEquals(try src.read("Repeat the new password: ")) else { throw VaultError(.usage, "the passwords do not match; nothing was changed") }
        }
        guard pw.count >= 8 else { throw VaultError(.usage, "the new password is too short: use at least 8 characters") }
        return pw
    }
}
