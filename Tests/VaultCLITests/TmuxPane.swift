import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `vault browse` in a real terminal: a private tmux server (its own socket under the harness
/// root) with one window of the given size, running a small script: the command, then its exit
/// status and the terminal's settings (`stty -a`), so a test can check the terminal was given
/// back in a sane state. Tests poll the screen (`capture-pane`) with a deadline, never sleep.
final class TmuxPane {
    let h: CLIHarness
    let socket: String
    let env: [String: String]
    /// How long `waitFor` polls before failing.
    static let deadline: TimeInterval = 20

    static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

    init(_ h: CLIHarness, args: [String] = [], env extra: [String: String] = [:], columns: Int = 80, rows: Int = 24) throws {
        try XCTSkipUnless(Self.available, "needs tmux (scripts/install-deps.sh installs it)")
        self.h = h
        socket = h.root.appendingPathComponent("tmux-\(UUID().uuidString.prefix(8)).sock").path
        var e = h.env
        e["TERM"] = "xterm-256color"   // the client's; panes get tmux's own
        e["SWIFT_BACKTRACE"] = "interactive=no"   // a crash report must not wait for a key
        e.merge(extra) { $1 }
        e.removeValue(forKey: "TMUX")
        env = e
        let script = h.root.appendingPathComponent("pane.sh")
        try Data("""
            #!/bin/sh
            trap : INT
            vault="$1"; shift
            "$vault" browse "$@"
            echo "BROWSE-EXIT=$?"
            echo "STTY: $(stty -a | tr '\\n;' '  ')"
            exec sleep 3600

            """.utf8).write(to: script)
        var session = ["new-session", "-d", "-x", "\(columns)", "-y", "\(rows)", "--", "/bin/sh", script.path, CLIHarness.vaultBinary]
        session += args
        try tmux(session, check: true)
    }

    deinit { _ = try? tmux(["kill-server"]) }

    /// Runs `tmux -S SOCKET ARGS…`; returns its standard output. Started with `posix_spawn`, its
    /// output through a file and every other descriptor closed: `new-session` forks the tmux
    /// server, which would keep whatever it inherits open for good (Foundation's `Process`
    /// waits for its own child through such a descriptor, so it would never see the exit).
    @discardableResult
    func tmux(_ args: [String], check: Bool = false) throws -> String {
        let outFile = h.root.appendingPathComponent("tmux-out-\(UUID().uuidString)").path
        defer { unlink(outFile) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd > 2 && fcntl(fd, F_GETFD) >= 0 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        let argv: [String] = ["tmux", "-S", socket, "-f", "/dev/null"] + args
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/usr/bin/tmux", &actions, nil, cArgs, cEnv)
        guard rc == 0 else { throw TransferTestError("cannot start tmux: \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if check && status != 0 { throw TransferTestError("tmux \(args.joined(separator: " ")) failed (\(status))") }
        return (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? ""
    }

    /// Presses keys, by tmux's names (`Enter`, `Left`, `C-c`, `j`).
    func press(_ keys: String...) throws { try tmux(["send-keys"] + keys) }

    /// Types `text` literally.
    func type(_ text: String) throws { try tmux(["send-keys", "-l", text]) }

    /// The screen's text, one line per row (`escapes`: with the colours and attributes).
    func screen(escapes: Bool = false) throws -> String {
        try tmux(["capture-pane", "-p"] + (escapes ? ["-e"] : []))
    }

    /// Polls the screen until `condition` holds on a settled screen (the same text captured twice,
    /// 50 ms apart: a frame tmux caught half drawn is not taken); fails (showing the screen) after
    /// the deadline.
    @discardableResult
    func waitFor(_ what: String, file: StaticString = #filePath, line: UInt = #line,
                 _ condition: (String) -> Bool) throws -> String {
        var last = ""
        let settled = {
            last = try self.screen()
            guard condition(last) else { return false }
            usleep(50_000)
            let again = try self.screen()
            defer { last = again }
            return again == last && condition(again)
        }
        if try eventually(within: Self.deadline, settled) { return last }
        XCTFail("timed out waiting for \(what); the screen:\n\(last)", file: file, line: line)
        throw TransferTestError("timed out waiting for \(what)")
    }

    /// Waits until the screen shows `text`.
    @discardableResult
    func waitFor(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try waitFor("'\(text)'", file: file, line: line) { $0.contains(text) }
    }

    /// Waits until the screen no longer shows `text`.
    @discardableResult
    func waitUntilGone(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try waitFor("'\(text)' to disappear", file: file, line: line) { !$0.contains(text) }
    }

    /// The row of the screen holding `text`.
    func row(containing text: String) throws -> String? {
        try screen().split(separator: "\n", omittingEmptySubsequences: false).first { $0.contains(text) }.map(String.init)
    }

    func resize(columns: Int, rows: Int) throws {
        try tmux(["resize-window", "-x", "\(columns)", "-y", "\(rows)"], check: true)
    }

    /// The pid of the process running in the pane (the script's shell).
    func panePid() throws -> pid_t {
        guard let pid = pid_t(try tmux(["display-message", "-p", "#{pane_pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TransferTestError("no pane pid")
        }
        return pid
    }

    /// The pid of the descendant of `parent` whose command name is `name`, if one runs.
    static func descendant(of parent: pid_t, named name: String) -> pid_t? {
        var queue = [parent]
        while let p = queue.popLast() {
            let kids = (try? String(contentsOfFile: "/proc/\(p)/task/\(p)/children", encoding: .utf8)) ?? ""
            for k in kids.split(separator: " ").compactMap({ pid_t($0) }) {
                let comm = (try? String(contentsOfFile: "/proc/\(k)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                if comm == name { return k }
                queue.append(k)
            }
        }
        return nil
    }

    /// The running `vault browse` process.
    func browsePid() throws -> pid_t {
        guard let pid = Self.descendant(of: try panePid(), named: "vault") else { throw TransferTestError("vault browse is not running") }
        return pid
    }

    /// Waits for the browser to end; returns its exit status and the terminal settings after it.
    func exitStatusAndTerminalSettings(file: StaticString = #filePath, line: UInt = #line) throws -> (status: Int32, stty: [String]) {
        var text = ""
        try waitFor("the browser to exit", file: file, line: line) { _ in
            text = (try? self.tmux(["capture-pane", "-p", "-J", "-S", "-100"])) ?? ""
            return text.contains("BROWSE-EXIT=") && text.contains("STTY:") && text.contains("isig")
        }
        let status = text.components(separatedBy: "BROWSE-EXIT=")[1].prefix { $0.isNumber }
        let stty = text.components(separatedBy: "STTY:")[1].split(separator: "\n")[0]
        return (Int32(status) ?? -1, stty.split(separator: " ").map(String.init))
    }

    /// Asserts the terminal is back in its normal (cooked) mode: line editing, echo, signals.
    func assertTerminalSane(_ stty: [String], file: StaticString = #filePath, line: UInt = #line) {
        for flag in ["icanon", "echo", "isig", "icrnl", "opost"] {
            XCTAssertTrue(stty.contains(flag), "the terminal was left with -\(flag): \(stty.joined(separator: " "))", file: file, line: line)
        }
    }
}
