import Foundation
import VaultCore
import VaultSync

/// `vault config`: the vault's sync settings (`conflicts`, `device-name`), kept in its encrypted
/// database.
extension VaultCommandLine {
    static let configCommand = Command(
        name: "config", usage: "vault config [list | get KEY | set KEY VALUE | unset KEY] [--json]",
        summary: "show or change sync settings: conflicts (keep-both|last-writer-wins), device-name (in conflict copies' names)",
        run: runConfig)

    /// A setting `vault config` knows, with what it accepts.
    struct ConfigKey: Sendable {
        var key: String
        var setting: SyncSetting
        var help: String
        var check: @Sendable (String) -> Bool
    }

    static let configKeys: [ConfigKey] = [
        ConfigKey(key: "conflicts", setting: .conflicts, help: "keep-both or last-writer-wins", check: { ConflictPolicy(rawValue: $0) != nil }),
        ConfigKey(key: "device-name", setting: .deviceName, help: "1 to 64 characters, no '/' or control characters",
                  check: { !$0.isEmpty && $0.count <= 64 && !$0.unicodeScalars.contains { $0 == "/" || $0.value < 32 || $0.value == 127 } }),
    ]

    static func runConfig(_ ctx: CommandContext, _ a: Arguments) throws {
        let action = a.positionals.first ?? "list"
        func entry(_ k: String) throws -> ConfigKey {
            guard let e = configKeys.first(where: { $0.key == k }) else {
                throw VaultError(.usage, "unknown setting '\(DisplayText.escaped(k))'", hint: "settings: " + configKeys.map(\.key).joined(separator: ", "))
            }
            return e
        }
        switch action {
        case "list", "get":
            try a.expectPositionals(max: action == "get" ? 2 : 1)
            let vault = try ctx.openVault(lock: .control, access: .read)
            let keys = action == "get" ? [try entry(try a.positional(1, "KEY"))] : configKeys
            var values: [String: String] = [:]
            for k in keys { values[k.key] = try effective(ctx, vault, k.setting) }
            if ctx.out.json { try ctx.out.emit(values); return }
            for k in keys { ctx.out.line(action == "get" ? values[k.key]! : "\(k.key) = \(values[k.key]!)") }
        case "set":
            try a.expectPositionals(max: 3)
            let k = try entry(try a.positional(1, "KEY")), value = try a.positional(2, "VALUE")
            guard k.check(value) else { throw VaultError(.usage, "\(k.key) takes \(k.help)") }
            if k.setting == .conflicts, let forced = ctx.policy.conflictPolicy.value, forced != value {
                throw VaultError(.policy, "the policy sets conflicts to \(forced)", hint: "ask your administrator")
            }
            let vault = try ctx.openVault()
            try vault.setSetting(k.setting, value)
            let msg = "\(k.key) = \(value)"
            if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
        case "unset":
            try a.expectPositionals(max: 2)
            let k = try entry(try a.positional(1, "KEY"))
            let vault = try ctx.openVault()
            try vault.setSetting(k.setting, nil)
            let msg = "\(k.key) = \(try effective(ctx, vault, k.setting)) (default)"
            if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
        default:
            throw VaultError(.usage, "unknown config action '\(DisplayText.escaped(action))'", hint: "list, get KEY, set KEY VALUE or unset KEY")
        }
    }

    /// A setting as it applies: the policy's, the vault's, or the default.
    static func effective(_ ctx: CommandContext, _ vault: Vault, _ s: SyncSetting) throws -> String {
        switch s {
        case .conflicts: return try SyncClient.conflictPolicy(vault: vault, policy: ctx.policy).rawValue
        case .deviceName: return try SyncClient.deviceName(vault: vault)
        default: return try vault.setting(s) ?? ""
        }
    }
}
