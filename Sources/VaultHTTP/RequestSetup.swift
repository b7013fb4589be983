internal import CCurl

/// Turns a configuration and a request into libcurl options on a freshly reset handle.
struct RequestSetup {
    let configuration: HTTPClientConfiguration
    let request: HTTPRequest

    /// Libcurl's receive and upload buffer sizes: big pieces for throughput, still small memory.
    static let bufferSize = 512 * 1024

    /// The TLS 1.2 suites offered (OpenSSL names): ECDHE with AES-GCM or ChaCha20-Poly1305, as
    /// in Mozilla's "intermediate" profile without its finite-field DHE suites.
    static let tls12Ciphers = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// Applies every option; returns the header list, which the caller frees after the transfer.
    func apply(to easy: CurlEasy) throws(HTTPError) -> UnsafeMutablePointer<curl_slist>? {
        let c = configuration
        let isHTTPS = request.url.lowercased().hasPrefix("https://")
        try easy.set(CURLOPT_NOSIGNAL, true)
        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        if c.bypassProxy { try easy.set(CURLOPT_NOPROXY, "*") }
        // Never follow a redirect from https down to http.
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, isHTTPS ? "https" : "http,https")
        try easy.set(CURLOPT_FOLLOWLOCATION, c.followRedirects)
        if c.followRedirects { try easy.set(CURLOPT_MAXREDIRS, 10) }

        // Trust: verification always on.
        try easy.set(CURLOPT_SSL_VERIFYPEER, 1)
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = c.caFile { try easy.set(CURLOPT_CAINFO, caFile) }
        // TLS 1.2 or newer, whatever the system's OpenSSL configuration allows; TLS 1.2 only
        // with forward-secret AEAD suites (every TLS 1.3 suite is one).
        try easy.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        try easy.set(CURLOPT_SSL_CIPHER_LIST, Self.tls12Ciphers)
        if !c.pinnedPublicKeys.isEmpty {
            try easy.set(CURLOPT_PINNEDPUBLICKEY, c.pinnedPublicKeys.joined(separator: ";"))
        }

        // Timeouts: no overall limit (a 10 GB transfer takes long), only connect and stall.
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(c.connectTimeout))
        try easy.set(CURLOPT_LOW_SPEED_LIMIT, max(0, c.lowSpeedLimit))
        try easy.set(CURLOPT_LOW_SPEED_TIME, Int(max(1, c.lowSpeedTime.rounded(.up))))
        try easy.set(CURLOPT_TCP_KEEPALIVE, true)

        try easy.set(CURLOPT_USERAGENT, c.userAgent)
        try easy.set(CURLOPT_HTTP_VERSION,
                     c.preferHTTP2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1)
        try easy.set(CURLOPT_BUFFERSIZE, Self.bufferSize)
        try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, Self.bufferSize)

        if let sig = c.awsSigV4 {
            try easy.set(CURLOPT_AWS_SIGV4, sig.curlParameter)
            try easy.set(CURLOPT_USERNAME, sig.accessKeyId)
            try easy.set(CURLOPT_PASSWORD, sig.secretAccessKey)
        }
        try applyMethodAndBody(to: easy)
        let list = try headerList()
        do {
            try easy.set(CURLOPT_HTTPHEADER, list: list)
        } catch {
            curl_slist_free_all(list)
            throw error
        }
        return list
    }

    private func applyMethodAndBody(to easy: CurlEasy) throws(HTTPError) {
        let method = request.method
        let length = request.body.length
        guard length >= 0 else {
            throw .transport(code: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue), message: "negative body length")
        }
        switch method {
        case .head:
            try easy.set(CURLOPT_NOBODY, true)
        case .post:
            try easy.set(CURLOPT_POST, true)
            try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, large: length)
        case .put:
            try easy.set(CURLOPT_UPLOAD, true)
            try easy.set(CURLOPT_INFILESIZE_LARGE, large: length)
        default:
            if length > 0 || method == .patch {
                // Any other method with a body: PUT semantics under the custom name.
                try easy.set(CURLOPT_UPLOAD, true)
                try easy.set(CURLOPT_INFILESIZE_LARGE, large: length)
            } else {
                try easy.set(CURLOPT_HTTPGET, true)
            }
            if method != .get { try easy.set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
        }
    }

    /// The caller's headers, plus `Expect:` (no 100-continue round trip) for bodies and an empty
    /// `Content-Type:` for POST so libcurl adds no form type the caller did not ask for.
    private func headerList() throws(HTTPError) -> UnsafeMutablePointer<curl_slist>? {
        var lines: [String] = []
        var names = Set<String>()
        for (name, value) in request.headers {
            // Bytes, not Characters: "\r\n" is a single Character in Swift.
            guard Self.isToken(name), !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                // The value is never echoed: it may be a credential.
                throw .transport(code: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue),
                                 message: "invalid request header \(Self.isToken(name) ? name : "name")")
            }
            names.insert(name.lowercased())
            lines.append(value.isEmpty ? "\(name):" : "\(name): \(value)")
        }
        let hasBody = request.method == .post || request.method == .put || request.body.length > 0
        // libcurl 7.88's SigV4 signs an empty (removing) header it then does not send, so a
        // signed request gets neither: the caller sets Content-Type, and a large body waits for
        // 100-continue.
        let signed = configuration.awsSigV4 != nil
        if hasBody && !names.contains("expect") && !signed { lines.append("Expect:") }
        if request.method == .post && !names.contains("content-type") && !signed { lines.append("Content-Type:") }

        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let next = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                throw .transport(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "out of memory")
            }
            list = next
        }
        return list
    }

    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
                || "!#$%&'*+-.^_`|~".utf8.contains(b)
        }
    }

    private static func milliseconds(_ t: Double) -> Int {
        guard t.isFinite, t > 0 else { return 0 }
        return Int(min(t * 1000, Double(Int32.max)).rounded(.up))
    }
}
