import Foundation
import VaultServer

exit(VaultServerMain.run(Array(CommandLine.arguments.dropFirst())))
