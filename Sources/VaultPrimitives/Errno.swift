#if canImport(Glibc)
import Glibc
#endif

/// A C `errno` value, typed (the model is swift-system's `Errno`).
public struct Errno: Error, Equatable, Hashable, RawRepresentable, CustomStringConvertible, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` now.
    public static var current: Errno { Errno(rawValue: errno) }

    /// The C library's sentence for it (`strerror`).
    public var description: String { String(cString: strerror(rawValue)) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    public static let noEntry = Errno(rawValue: ENOENT)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let exists = Errno(rawValue: EEXIST)
    public static let ioError = Errno(rawValue: EIO)

    /// Whether this is a full disk or an exhausted quota.
    public var isNoSpace: Bool { self == .noSpace || self == .quotaExceeded }

    /// Lets `catch Errno.noSpace` and `case .noSpace` match.
    public static func ~= (pattern: Errno, value: Error) -> Bool { (value as? Errno) == pattern }
}

/// A failed file-system call: the operation, the path and the errno (as NIO's `FileSystemError`).
public struct FileSystemError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let path: String
    public let errno: Errno

    public init(operation: String, path: String, errno: Errno) {
        self.operation = operation; self.path = path; self.errno = errno
    }

    public var description: String { "\(operation) \(path): \(errno)" }
}
