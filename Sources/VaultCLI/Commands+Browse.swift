import Foundation
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

extension VaultCommandLine {
    static let browseCommands: [Command] = [
        Command(name: "browse", usage: "vault browse [PATH]",
                summary: "browse the vault full-screen: arrows or hjkl to move, Enter to open (files in $PAGER), p pin, e evict, d delete, r rename, / filter, ? help",
                run: runBrowse),
    ]

    static func runBrowse(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 1)
        if ctx.out.json {
            throw VaultError(.usage, "vault browse is interactive and has no --json output", hint: "use `vault ls --json` or `vault tree --json`")
        }
        guard isatty(0) == 1, isatty(1) == 1 else {
            throw VaultError(.usage, "vault browse needs a terminal: its standard input and output must be one",
                             hint: "in scripts and pipes use `vault ls` or `vault tree`")
        }
        try Browser.run(ctx, path: a.positionals.first ?? "/")
    }
}
