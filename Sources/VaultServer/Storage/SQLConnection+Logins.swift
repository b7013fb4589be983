import Foundation
import VaultSQL

/// What a row of `login_failures` counts: failed logins of a user name, or from a client IP.
enum LoginSubject: String, SQLBindable {
    case user, ip
    var sqlValue: SQLValue { .text(rawValue) }
}

/// The login throttle's rows (`StoredLoginLedger`): failure counts per user name and per client
/// IP, and the IPs each user name signed in from. Shared by every server on the store.
extension SQLConnection {
    func loginCounter(_ subject: LoginSubject, _ key: String) throws -> LoginCounter? {
        guard let row = try queryOne("SELECT failures, last_at FROM login_failures WHERE kind = ? AND subject = ?", [subject, key]) else { return nil }
        return LoginCounter(failures: try row.decode(Double.self, "failures"), last: try row.decode(Double.self, "last_at"))
    }

    /// Replaces the counter of `key` (nil deletes it). No UPSERT on SQLite 3.15: an UPDATE, then
    /// an INSERT when it changed nothing (the caller holds the write lock).
    func setLoginCounter(_ subject: LoginSubject, _ key: String, _ counter: LoginCounter?) throws {
        guard let counter else {
            try run("DELETE FROM login_failures WHERE kind = ? AND subject = ?", [subject, key])
            return
        }
        let changed = try run("UPDATE login_failures SET failures = ?, last_at = ? WHERE kind = ? AND subject = ?",
                              [counter.failures, counter.last, subject, key])
        if changed == 0 {
            try run("INSERT INTO login_failures(kind, subject, failures, last_at) VALUES(?,?,?,?)",
                    [subject, key, counter.failures, counter.last])
        }
    }

    /// The IPs `user` signed in from, with when.
    func knownLoginIPs(user: String) throws -> [String: Double] {
        var known: [String: Double] = [:]
        for row in try query("SELECT ip, seen_at FROM login_known WHERE user_name = ?", [user]) {
            known[try row.decode(String.self, "ip")] = try row.decode(Double.self, "seen_at")
        }
        return known
    }

    /// Writes `user`'s known IPs as `after`, given that they were `before`.
    func setKnownLoginIPs(user: String, before: [String: Double], after: [String: Double]) throws {
        for ip in before.keys where after[ip] == nil {
            try run("DELETE FROM login_known WHERE user_name = ? AND ip = ?", [user, ip])
        }
        for (ip, seen) in after where before[ip] != seen {
            if before[ip] == nil {
                try run("INSERT INTO login_known(user_name, ip, seen_at) VALUES(?,?,?)", [user, ip, seen])
            } else {
                try run("UPDATE login_known SET seen_at = ? WHERE user_name = ? AND ip = ?", [seen, user, ip])
            }
        }
    }

    /// Deletes counters whose failures are all forgotten by `now` (one per `decay` seconds) and
    /// known IPs last seen `knownFor` seconds ago or more; returns the rows deleted.
    @discardableResult
    func pruneLogins(now: Double, decay: Double, knownFor: Double) throws -> Int {
        var n = 0
        if decay > 0 { n += try run("DELETE FROM login_failures WHERE last_at + failures * ? <= ?", [decay, now]) }
        n += try run("DELETE FROM login_known WHERE seen_at <= ?", [now - knownFor])
        return n
    }
}
