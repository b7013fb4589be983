import VaultCore

/// One `vault` subcommand: its help and its options, and what it does.
struct Command: Sendable {
    let name: String
    let usage: String
    let summary: String
    var valued: Set<String> = []
    var flags: Set<String> = []
    var aliases: [String: String] = [:]
    /// False for the organisation's own tools, which must work to repair a broken policy.
    var obeysPolicy = true
    let run: @Sendable (CommandContext, Arguments) throws -> Void

    /// Options every command accepts.
    static let commonValued: Set<String> = ["password-file"]
    static let commonFlags: Set<String> = ["json", "help"]
}

extension VaultCommandLine {
    /// Every command, in the order `vault help` lists them.
    static let commands: [Command] = sessionCommands + treeCommands + contentCommands + storageCommands + keyCommands + policyCommands + backupCommands + syncCommands + browseCommands + agentCommands + [joinCommand]
        + [configCommand, conflictsCommand, revisionsCommand, restoreCommand]
}
