import Foundation
import VaultAPI
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// `vault-server user …`: each command opens the data folder's database (a server may be
/// running on it; SQLite's locking and busy timeout serialise the two) and prints what it did.
struct UserCommands {
    let dataDir: String
    /// `--metadata`; nil is `DATA/meta.db`.
    var metadata: String? = nil
    /// `--content`; nil is the data folder.
    var content: String? = nil

    private var location: MetadataLocation { MetadataLocation(argument: metadata, dataDir: dataDir) }

    /// Runs `command` and returns the exit code; a failure throws.
    func run(_ command: UserCommand) throws -> Int32 {
        switch command {
        case .add(let name, let passwordFile):
            try FileSystem.makeDirectory(dataDir)
            let id = try withPassword(passwordFile) { try directory().add(name: name, password: $0) }
            print(id)
        case .list(let json):
            print(try Self.listing(try existingDirectory().list(), json: json), terminator: "")
        case .passwd(let name, let passwordFile):
            let users = try existingDirectory()
            try withPassword(passwordFile) { try users.setPassword(name: name, password: $0) }
            print("changed the password of \(name); its earlier tokens are refused from now on")
        case .remove(let name, let confirmed):
            try remove(name, confirmed: confirmed)
        case .revokeSessions(let name):
            try existingDirectory().revokeTokens(name: name)
            print("revoked every token of \(name); signing in again gives a new one")
        }
        return 0
    }

    /// Asks (or takes `--yes`), then deletes the user's rows in one transaction and its files.
    private func remove(_ name: String, confirmed: Bool) throws {
        let users = try existingDirectory()
        guard try users.list().contains(where: { $0.name == name }) else {
            throw APIError.notFound("no user \(name) (vault-server user list shows who exists)")
        }
        if !confirmed { try Self.confirm("Remove user \(name) and delete all its files, revisions, uploads and key envelope? This cannot be undone.") }
        let (id, files) = try users.remove(name: name)
        // The rows are gone (committed): a crash here leaves only unreferenced files, which the
        // server's start-up recovery deletes.
        try ContentLocation.open(content, dataDir: dataDir, instance: nil).remove(files)
        print("removed user \(name) (\(id)): \(files.revisionIds.count) revisions and \(files.uploadIds.count) upload sessions deleted")
    }

    /// y/N on the terminal; refuses when standard input or standard error is not a terminal.
    private static func confirm(_ question: String) throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDERR_FILENO) == 1 else {
            throw UserCommandError("not removed: confirmation needs a terminal; add --yes to remove without asking")
        }
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        let answer = (readLine() ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        guard answer == "y" || answer == "yes" else { throw UserCommandError("not removed (answer y to remove)") }
    }

    /// The `user list` output: tab-separated lines, or a JSON array.
    static func listing(_ users: [UserRecord], json: Bool) throws -> String {
        guard json else {
            return users.map { "\($0.name)\t\($0.id)\t\(APIJSON.formatDate($0.createdAt))\n" }.joined()
        }
        struct Entry: Encodable { let name: String; let id: String; let createdAt: Date }
        let data = try APIJSON.encoder().encode(users.map { Entry(name: $0.name, id: $0.id, createdAt: $0.createdAt) })
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The password (first line of `file`, else of standard input) for `body`, zeroed after.
    private func withPassword<R>(_ file: String?, _ body: ([UInt8]) throws -> R) throws -> R {
        var password = try file.map { try FileSystem.readAll($0) } ?? Array((readLine(strippingNewline: true) ?? "").utf8)
        if let newline = password.firstIndex(where: { $0 == 0x0a || $0 == 0x0d }) {
            for i in newline..<password.count { password[i] = 0 }
            password.removeSubrange(newline...)
        }
        defer { password.wipe() }
        return try body(password)
    }

    private func directory() throws -> UserDirectory {
        UserDirectory(store: try MetadataStore(location))
    }

    /// Like `directory()`, but a folder without a database is an error (a mistyped --data must not
    /// make an empty server).
    private func existingDirectory() throws -> UserDirectory {
        if case .sqlite(let path) = location, !FileSystem.exists(path) {
            throw UserCommandError(metadata == nil ? "\(dataDir) holds no server data (no meta.db); check --data"
                                                   : "no metadata database at \(path); check --metadata")
        }
        return try directory()
    }
}

/// A `vault-server user` command that did not do what it was asked, with what to do instead.
struct UserCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
