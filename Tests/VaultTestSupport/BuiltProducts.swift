import Foundation

/// Where the executables of this build are (`vault`, `vault-agent`, `vault-server`): `VAULT_BIN`'s
/// folder when set, else the folder of the xctest runner, else `.build/debug` of the package.
public enum BuiltProducts {
    public static var directory: URL {
        if let bin = ProcessInfo.processInfo.environment["VAULT_BIN"] {
            return URL(fileURLWithPath: bin).deletingLastPathComponent()
        }
        // The xctest runner lives in the products folder.
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if url.lastPathComponent.hasSuffix(".xctest") || url.path.contains(".xctest/") {
            while url.path.contains(".xctest") { url.deleteLastPathComponent() }
        }
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("vault").path) { return url }
        let pkg = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return pkg.appendingPathComponent(".build/debug")
    }

    /// The path of the built executable `name`, or nil when it was not built.
    public static func executable(_ name: String) -> String? {
        let path = directory.appendingPathComponent(name).path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }
}
