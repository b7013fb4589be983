import Foundation
import VaultArguments
import VaultCore

/// `vault conflicts`: what syncs settled about changes made here and on another device, until cleared.
struct ConflictsCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "conflicts", abstract: "list the conflicts syncs settled (edit vs edit, edit vs delete, …) and what became of each; --clear forgets them")
    }

    @Flag(help: "forget the conflicts listed so far")
    var clear = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    /// What `--clear` did.
    struct Cleared: Encodable {
        var ok = true
        var message: String
        var cleared: Int
    }

    func run(_ ctx: CommandContext) throws {
        if clear {
            let vault = try ctx.openVault(lock: .exclusive, access: .readWrite)
            let n = try vault.clearConflicts()
            let msg = "Cleared \(n) conflict(s)."
            if ctx.out.json { try ctx.out.emit(Cleared(message: msg, cleared: n)) } else { ctx.out.line(msg) }
            return
        }
        let vault = try ctx.openVault(lock: .control, access: .read)
        let list = try vault.conflicts()
        if ctx.out.json { try ctx.out.emit(list); return }
        if list.isEmpty { ctx.out.line("No conflicts."); return }
        for c in list {
            let when = LsCommand.dateFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(c.time)))
            ctx.out.line("\(when)  \(c.kind)  \(DisplayText.escaped(c.path)): \(DisplayText.escaped(c.text))")
        }
    }
}
