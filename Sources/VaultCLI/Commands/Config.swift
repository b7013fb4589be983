import Foundation
import VaultArguments
import VaultCore
import VaultPrimitives
import VaultSync

/// `vault config`: the vault's sync settings, kept in its encrypted database.
struct ConfigCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "config", abstract: "show or change sync settings: conflicts (keep-both|last-writer-wins), device-name (in conflict copies' names)",
                             discussion: "A value the policy sets (conflictPolicy) cannot be changed here.",
                             subcommands: [List.self, Get.self, SetKey.self, UnsetKey.self], defaultSubcommand: List.self)
    }

    /// A setting `vault config` knows.
    enum Key: String, CaseIterable, ExpressibleByArgument {
        case conflicts
        case deviceName = "device-name"
        static var defaultValueName: String { "key" }

        var setting: SyncSetting {
            switch self {
            case .conflicts: return .conflicts
            case .deviceName: return .deviceName
            }
        }

        /// What the setting accepts, for errors.
        var accepts: String {
            switch self {
            case .conflicts: return ConflictPolicy.allCases.map(\.rawValue).joined(separator: " or ")
            case .deviceName: return "1 to 64 characters, no '/' or control characters"
            }
        }

        /// Whether `value` is one the setting accepts. A device name becomes part of conflict
        /// copies' names: it follows the name rules, and is short and printable.
        func accepts(_ value: String) -> Bool {
            switch self {
            case .conflicts: return ConflictPolicy(rawValue: value) != nil
            case .deviceName:
                return NameRules.problem(with: value, maxBytes: 256) == nil && DeviceName.isValid(value)
            }
        }

        /// The value that applies: the policy's, the vault's, or the default.
        func effective(_ ctx: CommandContext, _ vault: Vault) throws -> String {
            switch self {
            case .conflicts: return try SyncClient.conflictPolicy(vault: vault, policy: ctx.policy).rawValue
            case .deviceName: return try SyncClient.deviceName(vault: vault)
            }
        }
    }

    /// The settings shown (`list`: all; `get`: the one asked), by the names `vault config` takes.
    struct Settings: Encodable {
        var conflicts: String?
        var deviceName: String?
        enum CodingKeys: String, CodingKey {
            case conflicts
            case deviceName = "device-name"
        }
    }

    /// What `set` and `unset` did: the setting and the value that now applies.
    struct Changed: Encodable {
        var ok = true
        var message: String
        var key: String
        var value: String
    }

    static func show(_ ctx: CommandContext, _ keys: [Key], bare: Bool) throws {
        let vault = try ctx.openVault(lock: .control, access: .read)
        var s = Settings()
        var lines: [String] = []
        for k in keys {
            let v = try k.effective(ctx, vault)
            switch k {
            case .conflicts: s.conflicts = v
            case .deviceName: s.deviceName = v
            }
            lines.append(bare ? v : "\(k.rawValue) = \(v)")
        }
        if ctx.out.json { try ctx.out.emit(s) } else { lines.forEach(ctx.out.line) }
    }

    /// `vault config [list]`.
    struct List: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "list", abstract: "every setting with the value that applies")
        }
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions
        func run(_ ctx: CommandContext) throws { try ConfigCommand.show(ctx, Key.allCases, bare: false) }
    }

    /// `vault config get KEY`.
    struct Get: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "get", abstract: "the value of one setting")
        }
        @Argument(help: "the setting")
        var key: Key
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions
        func run(_ ctx: CommandContext) throws { try ConfigCommand.show(ctx, [key], bare: true) }
    }

    /// `vault config set KEY VALUE`.
    struct SetKey: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "set", abstract: "change a setting")
        }
        @Argument(help: "the setting")
        var key: Key
        @Argument(help: "its new value", valueName: "value")
        var value: String
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard key.accepts(value) else { throw ValidationError("\(key.rawValue) takes \(key.accepts)") }
        }

        func run(_ ctx: CommandContext) throws {
            if key == .conflicts, let forced = ctx.policy.conflictPolicy.value, forced != value {
                throw VaultError(.policy, "the policy sets conflicts to \(forced)", hint: "ask your administrator")
            }
            let vault = try ctx.openVault()
            try vault.setSetting(key.setting, value)
            let msg = "\(key.rawValue) = \(value)"
            if ctx.out.json { try ctx.out.emit(Changed(message: msg, key: key.rawValue, value: value)) } else { ctx.out.line(msg) }
        }
    }

    /// `vault config unset KEY`.
    struct UnsetKey: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "unset", abstract: "go back to a setting's default")
        }
        @Argument(help: "the setting")
        var key: Key
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        func run(_ ctx: CommandContext) throws {
            let vault = try ctx.openVault()
            try vault.setSetting(key.setting, nil)
            let value = try key.effective(ctx, vault)
            let msg = "\(key.rawValue) = \(value) (default)"
            if ctx.out.json { try ctx.out.emit(Changed(message: msg, key: key.rawValue, value: value)) } else { ctx.out.line(msg) }
        }
    }
}
