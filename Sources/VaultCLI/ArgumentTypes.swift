import VaultArguments
import VaultTPM
import VaultCore

/// A byte size as people write it: `4096`, `512M`, `10G`, `1.5GiB`.
struct ByteSize: ExpressibleByArgument, CustomStringConvertible {
    let bytes: UInt64
    init?(argument: String) {
        guard let b = ByteCount.parse(argument) else { return nil }
        bytes = b
    }
    static var defaultValueName: String { "size" }
    static var expectation: String { "a size like 4096, 512M or 10G" }
    var description: String { ByteCount.format(bytes) }
}

/// A content budget: a size, or `none`.
enum Budget: ExpressibleByArgument {
    case none
    case bytes(UInt64)
    init?(argument: String) {
        if argument == "none" { self = .none; return }
        guard let b = ByteCount.parse(argument) else { return nil }
        self = .bytes(b)
    }
    static var defaultValueName: String { "size" }
    static var expectation: String { "a size like 10G or 512M, or none" }
}

/// A duration: `30s`, `15m`, `8h`, `2d`, or `0` for no limit.
struct TimeSpan: ExpressibleByArgument {
    let seconds: Int64
    init?(argument: String) {
        guard let s = Duration.parse(argument) else { return nil }
        seconds = s
    }
    static var defaultValueName: String { "duration" }
    static var expectation: String { "a duration like 15m, 8h or 0 (never)" }
}

/// The key derivation functions a password slot may use.
enum KDFName: String, CaseIterable, ExpressibleByArgument {
    case argon2id
    case pbkdf2
    static var defaultValueName: String { "kdf" }
}

/// `--metered`: the network cost setting.
enum MeteredSetting: String, CaseIterable, ExpressibleByArgument {
    case yes, no, auto
    static var defaultValueName: String { "yes|no|auto" }
}

/// `--pcrs 7,16`: PCRs of the SHA-256 bank (0…23) a TPM slot is bound to.
extension PCRSelection: ExpressibleByArgument {
    public init?(argument: String) { self.init(list: argument) }
    public static var defaultValueName: String { "list" }
    public static var expectation: String { "PCR indexes 0…23 separated by commas, like 7 or 7,16" }
}
