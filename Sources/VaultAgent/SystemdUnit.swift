import Foundation
import VaultKeys
#if canImport(Glibc)
import Glibc
#endif

/// The systemd user unit that runs `vault agent` for one local copy of a vault: written to
/// `$XDG_CONFIG_HOME/systemd/user/vault-agent-<id>.service` by `vault agent install`, enabled and
/// started with `systemctl --user` (`VAULT_SYSTEMCTL` names another program, for tests).
public struct SystemdUnit: Sendable {
    /// `vault-agent-<local copy id>.service` (`VaultLayout.localId`: one unit per folder).
    public let name: String
    public let path: String
    public let text: String
    let systemctl: String
    /// A value that would break out of its line (a control character in a path).
    let unsafeValue: String?
    /// The unit an older version wrote for the vault id (`vault-agent-<first 16 hex of the vault
    /// id>.service`), when it is there and runs this folder's vault: `install` and `uninstall`
    /// replace and remove it, so one agent runs per folder.
    let legacy: (name: String, path: String)?

    public init(vaultId: String, layout: VaultLayout, environment: [String: String], executable: String) {
        name = "vault-agent-\(layout.localId(vaultId: vaultId)).service"
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        path = config + "/systemd/user/" + name
        let oldName = "vault-agent-\(vaultId.prefix(16)).service", oldPath = config + "/systemd/user/" + oldName
        let describes = "Description=vault agent for \(Self.escaped(layout.root)):"
        legacy = (try? String(contentsOfFile: oldPath, encoding: .utf8))?.split(separator: "\n").contains { $0.hasPrefix(describes) } == true
            ? (oldName, oldPath) : nil
        systemctl = environment["VAULT_SYSTEMCTL"] ?? "systemctl"
        // Only what decides which vault and which policy: the user manager supplies the rest
        // (XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS).
        let values = [executable, layout.root] + ["VAULT_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "VAULT_POLICY_FILE", "VAULT_POLICY_KEY_FILE"].compactMap { environment[$0] }
        unsafeValue = values.first { $0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f } }
        let kept = ["VAULT_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "VAULT_POLICY_FILE", "VAULT_POLICY_KEY_FILE"]
            .compactMap { k in environment[k].flatMap { $0.isEmpty ? nil : "Environment=\(Self.quoted("\(k)=\($0)"))\n" } }
        text = """
            # Written by `vault agent install`; `vault agent uninstall` removes it.
            [Unit]
            Description=vault agent for \(Self.escaped(layout.root)): auto-lock at the deadline, background transfers, push channel
            After=dbus.socket

            [Service]
            Type=simple
            ExecStart=\(Self.quoted(executable)) agent
            \(kept.joined())Restart=on-failure
            RestartSec=2
            UMask=0077
            LimitCORE=0
            NoNewPrivileges=yes

            [Install]
            WantedBy=default.target

            """
    }

    /// `%` is a specifier in unit files: `%%` is a literal one.
    static func escaped(_ s: String) -> String { s.replacingOccurrences(of: "%", with: "%%") }

    /// A double-quoted unit-file word (C escapes for `\` and `"`, `%%` for `%`).
    static func quoted(_ s: String) -> String {
        "\"" + escaped(s).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    public var isInstalled: Bool { FileManager.default.fileExists(atPath: path) }

    /// Writes the unit (0644, its folder created) and, with `start`, enables and starts it.
    /// Returns what happened, line by line; a `systemctl` that fails is reported, not thrown.
    public func install(start: Bool) throws -> [String] {
        if let bad = unsafeValue {
            throw VaultError(.invalidName, "'\(DisplayText.escaped(bad))' holds a control character and cannot go into a unit file",
                             hint: "use a vault path (VAULT_HOME) without line breaks or control characters")
        }
        let dir = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let tmp = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: tmp, contents: Data(text.utf8), attributes: [.posixPermissions: 0o644]),
              rename(tmp, path) == 0 else {
            unlink(tmp)
            throw VaultError(.io, "cannot write \(path)", hint: "check that \(dir) is writable")
        }
        var notes = try removeLegacy() + ["Wrote \(path)."]
        guard start else {
            notes.append("Start it with: systemctl --user daemon-reload && systemctl --user enable --now \(name)")
            return notes
        }
        for args in [["--user", "daemon-reload"], ["--user", "enable", "--now", name]] {
            let (ok, output) = run(args)
            if !ok {
                notes.append("`systemctl \(args.joined(separator: " "))` failed\(output.isEmpty ? "" : ": \(output)")")
                notes.append("Start it by hand once a user manager runs: systemctl --user daemon-reload && systemctl --user enable --now \(name); or run `vault agent` in the foreground.")
                return notes
            }
        }
        notes.append("Enabled and started \(name) (it starts again at each login, and after a failure).")
        return notes
    }

    /// Stops and disables the unit (best effort) and removes its file (and an older version's unit
    /// for this folder).
    public func uninstall() throws -> [String] {
        let legacyNotes = try removeLegacy()
        guard isInstalled || legacyNotes.isEmpty else { return legacyNotes }
        return try legacyNotes + remove(name: name, path: path)
    }

    /// Stops, disables and removes the older version's unit of this folder, if there is one.
    private func removeLegacy() throws -> [String] {
        guard let legacy, FileManager.default.fileExists(atPath: legacy.path) else { return [] }
        return try remove(name: legacy.name, path: legacy.path)
    }

    /// Stops and disables unit `name` (best effort) and removes its file `path`.
    private func remove(name: String, path: String) throws -> [String] {
        var notes: [String] = []
        let installed = FileManager.default.fileExists(atPath: path)
        let (ok, output) = run(["--user", "disable", "--now", name])
        if !ok && installed { notes.append("`systemctl --user disable --now \(name)` failed\(output.isEmpty ? "" : ": \(output)")") }
        if installed {
            guard unlink(path) == 0 else { throw VaultError(.io, "cannot remove \(path): \(String(cString: strerror(errno)))") }
            notes.append("Removed \(path).")
            _ = run(["--user", "daemon-reload"])
        } else {
            notes.append("No unit was installed (\(path)).")
        }
        return notes
    }

    /// systemd's word on the unit (`systemctl --user is-active`), or nil when it cannot say.
    public func activeState() -> String? {
        let (_, output) = run(["--user", "is-active", name])
        let word = output.split(separator: "\n").first.map(String.init) ?? ""
        return ["active", "inactive", "failed", "activating", "deactivating", "reloading"].contains(word) ? word : nil
    }

    /// Runs `systemctl` with `args`; its combined output, trimmed.
    private func run(_ args: [String]) -> (ok: Bool, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [systemctl] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { return (false, "\(error)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus == 0, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
