import Foundation
import VaultCore

/// `vault conflicts`: what syncs settled about changes made here and on another device, until cleared.
extension VaultCommandLine {
    static let conflictsCommand = Command(
        name: "conflicts", usage: "vault conflicts [--clear] [--json]",
        summary: "list the conflicts syncs settled (edit vs edit, edit vs delete, …) and what became of each; --clear forgets them",
        flags: ["clear"], run: runConflicts)

    static func runConflicts(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        let vault = try ctx.openVault(lock: a.flag("clear") ? .exclusive : .control, access: a.flag("clear") ? .readWrite : .read)
        let list = try vault.conflicts()
        if a.flag("clear") {
            let n = try vault.clearConflicts()
            let msg = "Cleared \(n) conflict(s)."
            if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
            return
        }
        if ctx.out.json { try ctx.out.emit(list); return }
        if list.isEmpty { ctx.out.line("No conflicts."); return }
        for c in list {
            let when = dateFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(c.time)))
            ctx.out.line("\(when)  \(c.kind)  \(c.path): \(c.text)")
        }
    }
}
