internal import CCurl
internal import CCurlShims

/// One libcurl easy handle and its error buffer. Every setopt/getinfo goes through here, so a
/// failing call becomes a typed `HTTPError` in one place. Not thread-safe.
final class CurlEasy {
    // SAFETY: owned by this object; freed in deinit; used only from the owning thread.
    let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init() throws(HTTPError) {
        try CurlGlobal.ensure()
        guard let h = curl_easy_init() else {
            throw .transport(code: Int(CURLE_FAILED_INIT.rawValue), message: "curl_easy_init failed")
        }
        handle = h
        let size = CCurlShims_error_size()
        errorBuffer = .allocate(capacity: size)
        errorBuffer.initialize(repeating: 0, count: size)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Puts every option back to its default (`curl_easy_reset`), keeping live connections and
    /// the TLS session and DNS caches, then re-attaches the error buffer.
    func reset() throws(HTTPError) {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        try check(CCurlShims_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer), CURLOPT_ERRORBUFFER)
    }

    func set(_ option: CURLoption, _ value: Int) throws(HTTPError) {
        try check(CCurlShims_setopt_long(handle, option, value), option)
    }

    func set(_ option: CURLoption, _ value: Bool) throws(HTTPError) {
        try set(option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, large value: Int64) throws(HTTPError) {
        try check(CCurlShims_setopt_off_t(handle, option, curl_off_t(value)), option)
    }

    /// libcurl copies string options, so `value` need not outlive the call.
    func set(_ option: CURLoption, _ value: String) throws(HTTPError) {
        try check(CCurlShims_setopt_str(handle, option, value), option)
    }

    /// The list must stay alive until the transfer that uses it has finished.
    func set(_ option: CURLoption, list: UnsafeMutablePointer<curl_slist>?) throws(HTTPError) {
        try check(CCurlShims_setopt_slist(handle, option, list), option)
    }

    func setCallbacks(context: UnsafeMutableRawPointer, progress: Bool) throws(HTTPError) {
        try check(CCurlShims_set_read_callback(handle, curlReadTrampoline, context), CURLOPT_READFUNCTION)
        try check(CCurlShims_set_write_callback(handle, curlWriteTrampoline, context), CURLOPT_WRITEFUNCTION)
        try check(CCurlShims_set_header_callback(handle, curlHeaderTrampoline, context), CURLOPT_HEADERFUNCTION)
        if progress {
            try check(CCurlShims_set_xferinfo_callback(handle, curlProgressTrampoline, context),
                      CURLOPT_XFERINFOFUNCTION)
        }
    }

    func info(_ info: CURLINFO) -> Int {
        var value = 0
        return CCurlShims_getinfo_long(handle, info, &value) == CURLE_OK ? value : 0
    }

    /// Runs the transfer; returns the `CURLcode` and the error buffer's text.
    func perform() -> (CURLcode, String) {
        errorBuffer[0] = 0
        let rc = curl_easy_perform(handle)
        return (rc, String(cString: errorBuffer))
    }

    private func check(_ rc: CURLcode, _ option: CURLoption) throws(HTTPError) {
        guard rc == CURLE_OK else {
            throw .transport(code: Int(rc.rawValue),
                             message: "setting option \(option.rawValue): \(String(cString: curl_easy_strerror(rc)))")
        }
    }
}
