import Foundation

/// Where a vault's files live. `VAULT_HOME` overrides everything (tests); otherwise the XDG base
/// directories: data in `$XDG_DATA_HOME/vault`, config in `$XDG_CONFIG_HOME/vault`.
public struct VaultLayout: Sendable {
    public let root: String
    public let configDirectory: String

    public init(root: String, configDirectory: String? = nil) {
        self.root = root
        self.configDirectory = configDirectory ?? (root as NSString).appendingPathComponent("config")
    }

    /// The layout from the environment.
    public static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) -> VaultLayout {
        if let home = env["VAULT_HOME"], !home.isEmpty {
            return VaultLayout(root: home)
        }
        let userHome = env["HOME"] ?? NSHomeDirectory()
        let data = env["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? userHome + "/.local/share"
        let config = env["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? userHome + "/.config"
        return VaultLayout(root: data + "/vault", configDirectory: config + "/vault")
    }

    package func path(_ name: String) -> String { (root as NSString).appendingPathComponent(name) }

    /// The keyslot file (wrapped master keys).
    public var keyslotFile: String { path("keyslots") }
    /// The SQLCipher metadata database.
    public var databaseFile: String { path("metadata.db") }
    /// Sealed content that can be downloaded again (the cache).
    public var cacheDirectory: String { path("cache") }
    /// Sealed content not yet on the server (must never be evicted).
    public var stagingDirectory: String { path("staging") }
    /// Temp files of blobs being written (same filesystem, for atomic rename).
    public var tempDirectory: String { path("tmp") }
    /// The advisory lock that serialises commands on this vault.
    public var lockFile: String { path("lock") }

    /// Names (in the root) of temp files an atomic rewrite of the keyslot file left behind when it
    /// was killed: `keyslots.tmp-<pid>` (`POSIX.writeAtomically`).
    package func keyslotTempFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { $0.hasPrefix("keyslots.tmp-") }
    }

    /// Every folder of the layout, created 0700.
    package var directories: [String] { [root, cacheDirectory, stagingDirectory, tempDirectory] }
}
