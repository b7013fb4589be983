import Foundation
import VaultArguments
import VaultCore

/// `vault mkdir`: create a folder.
struct MkdirCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "mkdir", abstract: "create a folder")
    }

    @Flag(short: "p", help: "create missing parent folders too; an existing folder is no error")
    var parents = false
    @Argument(help: "the vault folder to create", valueName: "path")
    var path: String
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault()
        try ctx.reportChanged(vault.mkdir(path, parents: parents), in: vault) { "Created \($0)/" }
    }
}

/// `vault mv`: rename or move.
struct MvCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "mv", abstract: "rename or move a file or folder",
                             discussion: "Into an existing folder DEST the node keeps its name; otherwise DEST is its new path.")
    }

    @Argument(help: "the vault file or folder to move", valueName: "src")
    var source: String
    @Argument(help: "the new path, or an existing folder to move it into", valueName: "dest")
    var destination: String
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault()
        try ctx.reportChanged(vault.move(source, to: destination), in: vault) { "Moved to \($0)" }
    }
}

/// `vault rm`: remove a file, or a folder with -r.
struct RmCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "rm", abstract: "remove a file, or a folder with -r")
    }

    @Flag(short: "r", help: "remove a folder and everything in it")
    var recursive = false
    @Argument(help: "the vault file or folder to remove", valueName: "path")
    var path: String
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    struct Result: Encodable {
        var ok = true
        var path: String
        /// How many nodes were removed (the folder and everything in it).
        var removed: Int
    }

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault()
        let removed = try vault.remove(path, recursive: recursive)
        ctx.queuedChanges(vault)
        if ctx.out.json { try ctx.out.emit(Result(path: path, removed: removed.count)) } else {
            ctx.out.line("Removed \(path)\(removed.count > 1 ? " and \(removed.count - 1) item(s) in it" : "")")
        }
    }
}
