import Foundation
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// A server address as vault accepts it, and the rules every connection to it obeys (checked
/// where the connection is made, `ServerAPI.init`, so `login` and every later network command
/// apply them to the address as stored):
///
/// - `https://` always; `http://` only to this machine: a host of `localhost`, an IPv4 address in
///   127.0.0.0/8 written as four decimal numbers, or `[::1]`. Anything else in clear text needs
///   the explicit opt-in of `vault login --insecure-http`, which warns at every use and which the
///   policy can forbid (`allowInsecureHTTP: false`). A clear-text connection never goes through a
///   proxy (a proxy may be on another machine).
/// - A policy's `allowedServers`, when it names any, must list the address, its origin
///   (`scheme://host[:port]`) or its host name.
///
/// The address is parsed strictly, by these rules and not by a general URL parser, so that what
/// is checked is what libcurl connects to: `scheme://host[:port][/path]` with no user
/// information, query or fragment; a host of letters, digits, `-` and `.`, or `[IPv6]`; a path of
/// unreserved characters, `/` and `%`-escapes.
public struct ServerAddress: Sendable, Equatable {
    /// `http` or `https`.
    public let scheme: String
    /// The host in lower case (an IPv6 address without brackets).
    public let host: String
    public let port: Int?
    /// Empty, or `/…` without a trailing slash.
    public let path: String

    /// The normalised address: lower-case scheme and host, no trailing slash.
    public var url: String { origin + path }
    /// `scheme://host[:port]`.
    public var origin: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host)" + (port.map { ":\($0)" } ?? "")
    }
    /// Whether the traffic stays unencrypted (`http://`).
    public var isCleartext: Bool { scheme == "http" }

    /// Whether the host is this machine: `localhost`, 127.0.0.0/8 in dotted decimal, or `::1`.
    public var isLoopback: Bool {
        if host == "localhost" { return true }
        if let v4 = Self.ipv4(host) { return v4[0] == 127 }
        if host.contains(":") {
            var a = in6_addr()
            guard inet_pton(AF_INET6, host, &a) == 1 else { return false }
            return withUnsafeBytes(of: a) { Array($0) } == [UInt8](repeating: 0, count: 15) + [1]
        }
        return false
    }

    /// Parses `text`; throws `.usage` for anything but the form above.
    public init(_ text: String) throws {
        let bad = VaultError(.usage, "'\(DisplayText.escaped(text))' is not a server address",
                             hint: "give it as https://HOST[:PORT][/PATH] (http:// only for a server on this machine)")
        var t = Substring(text.trimmingCharacters(in: .whitespaces))
        while t.hasSuffix("/") { t.removeLast() }
        guard let sep = t.range(of: "://") else { throw bad }
        let scheme = t[..<sep.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw bad }
        let rest = t[sep.upperBound...]
        let authority = rest.prefix { $0 != "/" }
        let path = String(rest.dropFirst(authority.count))
        let pathChars = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/%")
        guard path.allSatisfy(pathChars.contains), !path.contains("//") else { throw bad }
        var hostPart = authority, portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw bad }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw bad }
                portText = after.dropFirst()
            }
            var a = in6_addr()
            guard inet_pton(AF_INET6, String(hostPart), &a) == 1 else { throw bad }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                hostPart = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            }
            let hostChars = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.")
            guard !hostPart.isEmpty, hostPart.allSatisfy(hostChars.contains), !hostPart.hasPrefix("."), !hostPart.hasSuffix("."),
                  !hostPart.contains("..") else { throw bad }
        }
        var port: Int?
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let p = Int(portText), (1...65535).contains(p) else { throw bad }
            port = p
        }
        self.scheme = scheme
        self.host = hostPart.lowercased()
        self.port = port
        self.path = path
    }

    /// The four bytes of a dotted-decimal IPv4 address (each part 0–255, no leading zero: libcurl
    /// reads `0127` as octal), else nil.
    static func ipv4(_ host: String) -> [UInt8]? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for p in parts {
            guard !p.isEmpty, p.count <= 3, p.allSatisfy({ $0.isASCII && $0.isNumber }), p == "0" || !p.hasPrefix("0"),
                  let v = UInt8(p) else { return nil }
            out.append(v)
        }
        return out
    }

    /// Applies the rules above. `insecureHTTP` is the account's `--insecure-http` opt-in; `warn`
    /// receives the warning each clear-text use past this machine gets.
    public func check(policy: EffectivePolicy, insecureHTTP: Bool, warn: (String) -> Void) throws {
        if isCleartext && !isLoopback {
            guard insecureHTTP else {
                throw VaultError(.insecure, "\(url) is plain http:// to another machine: the server password and the bearer token would cross the network unencrypted (names and content are sealed either way)",
                                 hint: "use https:// (plain http:// is only for a server on this machine: 127.0.0.1, [::1] or localhost); `vault login --insecure-http` forces it")
            }
            if policy.allowInsecureHTTP.value == false {
                throw VaultError(.policy, "the policy forbids plain http:// to another machine (\(url))",
                                 hint: "log in to the server with https://: vault login --server https://\(origin.dropFirst("http://".count)) --user NAME")
            }
            warn("INSECURE: \(url) is plain http:// (vault login --insecure-http): the server password and the bearer token cross the network unencrypted")
        }
        if let allowed = policy.allowedServers.value, !isAllowed(by: allowed) {
            throw VaultError(.policy, "the policy does not allow syncing with \(url)",
                             hint: "allowed servers: \(allowed.isEmpty ? "none" : allowed.joined(separator: ", ")); `vault login --server URL --user NAME` connects to one of them")
        }
    }

    /// Whether `allowed` lists this address: the whole URL, its origin or its host name.
    public func isAllowed(by allowed: [String]) -> Bool {
        allowed.contains { entry in
            var e = entry.lowercased()
            while e.hasSuffix("/") { e.removeLast() }
            return e == url.lowercased() || e == origin || e == host || e == "[\(host)]"
        }
    }
}
