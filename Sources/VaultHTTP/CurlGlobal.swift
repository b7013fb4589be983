internal import CCurl
internal import CCurlShims

/// `curl_global_init` exactly once per process, before the first easy handle. Swift runs a
/// `static let` initialiser once, thread-safely.
enum CurlGlobal {
    /// The `CURLcode` raw value of the one `curl_global_init(CURL_GLOBAL_ALL)` call.
    static let initResult: UInt32 = CCurlShims_global_init().rawValue

    /// Runs the global initialisation if it has not run yet; throws if it failed.
    static func ensure() throws(HTTPError) {
        let rc = CURLcode(rawValue: initResult)
        guard rc == CURLE_OK else { throw HTTPError(curlCode: rc, message: "curl_global_init failed") }
    }
}
