internal import CCurl

extension HTTPError {
    /// Classifies a failed `CURLcode` with curl's error-buffer text (or `curl_easy_strerror`
    /// when the buffer is empty).
    init(curlCode code: CURLcode, message: String) {
        let text = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
        switch code {
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT,
             CURLE_PROXY:
            self = .connect(text)
        case CURLE_OPERATION_TIMEDOUT:
            // No overall timeout is ever set, so a timeout is either the connect phase or the
            // low-speed check; only the latter says "too slow".
            self = text.contains("too slow") ? .stalled(text) : .timeout(text)
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
             CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_PEER_FAILED_VERIFICATION,
             CURLE_USE_SSL_FAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT:
            self = .tls(text)
        case CURLE_ABORTED_BY_CALLBACK:
            self = .aborted
        default:
            self = .transport(code: Int(code.rawValue), message: text)
        }
    }
}
