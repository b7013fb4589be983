/// Why a request failed before a complete response arrived. HTTP error statuses (4xx, 5xx) are
/// not errors here: they come back as an `HTTPResponse` for the caller to judge.
///
/// Messages are libcurl's own text (its error buffer); they never contain header values, so an
/// `Authorization` token cannot leak through them.
public enum HTTPError: Error, Equatable, Sendable {
    /// The host could not be resolved or reached (refused, unreachable, proxy failure).
    case connect(String)
    /// Connecting took longer than `connectTimeout`.
    case timeout(String)
    /// The transfer went slower than `lowSpeedLimit` for `lowSpeedTime`.
    case stalled(String)
    /// The TLS handshake or the server's certificate (chain, name, pinned key) was rejected.
    case tls(String)
    /// The caller stopped the transfer (`onBody` or `onProgress` returned false).
    case aborted
    /// Any other libcurl failure, such as a connection reset mid-body; `code` is the `CURLcode`.
    case transport(code: Int, message: String)
    /// A collected body would exceed the caller's limit.
    case tooLarge
}

extension HTTPError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .connect(let m): return "cannot connect: \(m)"
        case .timeout(let m): return "timed out: \(m)"
        case .stalled(let m): return "transfer stalled: \(m)"
        case .tls(let m): return "TLS failure: \(m)"
        case .aborted: return "transfer aborted by the caller"
        case .transport(let code, let m): return "transfer failed (curl \(code)): \(m)"
        case .tooLarge: return "response body larger than allowed"
        }
    }
}
