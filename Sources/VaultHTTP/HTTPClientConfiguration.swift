import Foundation

/// How an `HTTPClient` connects: trust, timeouts and protocol preferences.
///
/// TLS peer and host-name verification are always on; there is deliberately no switch to turn
/// them off. Tests trust a self-signed server through `caFile` instead.
///
/// Proxies: libcurl itself honours `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` (and
/// their upper-case forms, except `HTTP_PROXY`) from the environment. This configuration does
/// not override them.
public struct HTTPClientConfiguration: Sendable {
    /// A PEM bundle of CA certificates to trust instead of the system store (`CURLOPT_CAINFO`).
    public var caFile: String?
    /// Public keys the server must present, each `"sha256//<base64 of the SPKI SHA-256>"`
    /// (`CURLOPT_PINNEDPUBLICKEY`). Empty means no pinning. A mismatch fails with `.tls`.
    public var pinnedPublicKeys: [String]
    /// How long connecting (TCP and TLS handshake) may take.
    public var connectTimeout: TimeInterval
    /// With `lowSpeedTime`: a transfer slower than this many bytes per second for that long
    /// fails with `HTTPError.stalled`.
    public var lowSpeedLimit: Int
    /// See `lowSpeedLimit`. Rounded up to whole seconds (libcurl's unit), at least one. libcurl
    /// averages the speed over the last few seconds, so after a burst (for example an upload
    /// filling socket buffers) detection can take up to about five seconds longer.
    public var lowSpeedTime: TimeInterval
    /// The `User-Agent` header sent with every request.
    public var userAgent: String
    /// Whether 3xx responses are followed. Off by default: in the upload protocol a 308 means
    /// "resume incomplete" and must reach the caller.
    public var followRedirects: Bool
    /// Offer HTTP/2 over TLS (ALPN), falling back to HTTP/1.1; plain `http://` stays HTTP/1.1.
    public var preferHTTP2: Bool
    /// Connect directly, ignoring any proxy in the environment (`CURLOPT_NOPROXY` `*`). Off by
    /// default.
    public var bypassProxy = false
    /// Sign every request with AWS Signature Version 4 (`CURLOPT_AWS_SIGV4`): S3 and its
    /// look-alikes. nil (the default) signs nothing.
    public var awsSigV4: AWSSigV4?

    /// A configuration with the defaults listed on each property.
    public init(caFile: String? = nil,
                pinnedPublicKeys: [String] = [],
                connectTimeout: TimeInterval = 10,
                lowSpeedLimit: Int = 1024,
                lowSpeedTime: TimeInterval = 30,
                userAgent: String = "vault/1",
                followRedirects: Bool = false,
                preferHTTP2: Bool = true) {
        self.caFile = caFile
        self.pinnedPublicKeys = pinnedPublicKeys
        self.connectTimeout = connectTimeout
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTime = lowSpeedTime
        self.userAgent = userAgent
        self.followRedirects = followRedirects
        self.preferHTTP2 = preferHTTP2
    }
}

/// The AWS Signature Version 4 credentials and scope of an `HTTPClient` (`CURLOPT_AWS_SIGV4`,
/// `CURLOPT_USERNAME` / `CURLOPT_PASSWORD`). Its `description` never shows the secret.
public struct AWSSigV4: Sendable, CustomStringConvertible {
    public var accessKeyId: String
    public var secretAccessKey: String
    public var region: String
    public var service: String

    public init(accessKeyId: String, secretAccessKey: String, region: String, service: String = "s3") {
        self.accessKeyId = accessKeyId; self.secretAccessKey = secretAccessKey
        self.region = region; self.service = service
    }

    /// libcurl's `provider1:provider2:region:service` parameter.
    var curlParameter: String { "aws:amz:\(region):\(service)" }

    public var description: String { "AWSSigV4(\(accessKeyId), \(region), \(service))" }
}
