/// Request ids as the access log and `X-Request-Id` carry them.
enum RequestId {
    /// 1–128 characters of `A-Z a-z 0-9 . _ : -`: what a balancer's id looks like, and nothing
    /// that could break a log line.
    static func isValid(_ s: String) -> Bool {
        (1...128).contains(s.utf8.count) && s.utf8.allSatisfy { b in
            (0x30...0x39).contains(b) || (0x41...0x5a).contains(b) || (0x61...0x7a).contains(b) || b == 0x2e || b == 0x5f || b == 0x3a || b == 0x2d
        }
    }

    /// The id of a request: the incoming `X-Request-Id` when valid (a balancer's, so its log and
    /// ours agree), else a new random one from `random`.
    static func choose(incoming: String?, random: () -> String) -> String {
        if let incoming, isValid(incoming) { return incoming }
        return random()
    }
}

/// The client a request is from, as the per-IP login backoff counts it.
enum ClientAddress {
    /// `peer` itself, unless it is a trusted proxy that sent `X-Forwarded-For`: then the last
    /// address of that header (the one the proxy itself appended; earlier ones are the client's
    /// word and could be anything). Of repeated header lines the request keeps the last, which is
    /// the proxy's own when it appends a line rather than extending the client's.
    static func resolve(peer: String, forwardedFor: String?, trusted: Set<String>) -> String {
        guard trusted.contains(peer), let forwardedFor else { return peer }
        guard let last = forwardedFor.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), isIPv4(last) else { return peer }
        return last
    }

    /// A dotted-quad IPv4 address (four numbers 0–255, no leading zeros).
    static func isIPv4(_ s: String) -> Bool {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { p in
            !p.isEmpty && p.count <= 3 && p.allSatisfy(\.isASCII) && p.allSatisfy(\.isNumber)
                && (p.count == 1 || p.first != "0") && Int(p).map { $0 <= 255 } == true
        }
    }
}
