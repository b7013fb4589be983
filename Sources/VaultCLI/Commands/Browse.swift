import Foundation
import VaultArguments
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// `vault browse`: the full-screen browser.
struct BrowseCommand: VaultCommand, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "browse", abstract: "browse the vault full-screen: arrows or hjkl to move, Enter to open (files in $PAGER), p pin, e evict, d delete, r rename, v revisions (R restores one), / filter, ? help",
                             discussion: "It needs a terminal on standard input and output (over ssh too, from 80×24); NO_COLOR turns colour off. It has no --json: in scripts use `vault ls` or `vault tree`.")
    }

    @Argument(help: "the vault folder to start in", valueName: "path")
    var path = "/"
    @OptionGroup var password: PasswordOptions

    func run(_ ctx: CommandContext) throws {
        guard isatty(0) == 1, isatty(1) == 1 else {
            throw VaultError(.usage, "vault browse needs a terminal: its standard input and output must be one",
                             hint: "in scripts and pipes use `vault ls` or `vault tree`")
        }
        try Browser.run(ctx, path: path)
    }
}
