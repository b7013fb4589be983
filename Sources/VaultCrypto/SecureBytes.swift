internal import CSodium
#if canImport(Glibc)
internal import Glibc
#endif

/// Key material.
///
/// The bytes live in memory from `sodium_malloc`: guard pages on both sides, `mlock`ed where the
/// process's RLIMIT_MEMLOCK allows, and wiped with `sodium_memzero` on release. A key of up to
/// 64 bytes takes a slot of a shared region of such memory (`SecureSlab`: one `sodium_malloc` for
/// 256 keys, where a blob's data key costs no system call); a larger one has its own.
/// The bytes are reachable only inside `withUnsafeBytes`/`withUnsafeMutableBytes`; `description`
/// and `debugDescription` are redacted; comparison is constant-time.
///
/// Not copy-on-write: a `SecureBytes` is a reference to one buffer. Mutating it through
/// `withUnsafeMutableBytes` while another thread reads it is the caller's race.
public final class SecureBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    private let base: UnsafeMutableRawPointer
    /// Number of key bytes.
    public let count: Int

    /// `count` zero bytes.
    public init(count: Int) {
        precondition(count >= 0, "SecureBytes count must not be negative")
        ensureSodium()
        // sodium_malloc(0) is legal but a 1-byte allocation keeps baseAddress non-nil for C calls.
        let pointer: UnsafeMutableRawPointer
        if count <= SecureSlab.slotSize {
            pointer = SecureSlab.shared.take()
        } else {
            guard let p = sodium_malloc(count) else { fatalError("sodium_malloc(\(count)) failed: out of memory") }
            pointer = p
        }
        sodium_memzero(pointer, Swift.max(count, 1))
        self.base = pointer
        self.count = count
    }

    /// A copy of `bytes`. Wipe your own source if it was secret.
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count)
        let destination = UnsafeMutableRawBufferPointer(start: base, count: count)
        let copied = bytes.withContiguousStorageIfAvailable { source -> Bool in
            if let start = source.baseAddress, !source.isEmpty {
                destination.baseAddress!.copyMemory(from: start, byteCount: source.count)
            }
            return true
        }
        if copied == nil {
            for (index, byte) in bytes.enumerated() { destination[index] = byte }
        }
    }

    /// A copy of `buffer`.
    public convenience init(copying buffer: UnsafeRawBufferPointer) {
        self.init(count: buffer.count)
        if let start = buffer.baseAddress, buffer.count > 0 {
            base.copyMemory(from: start, byteCount: buffer.count)
        }
    }

    /// `count` bytes from the operating system's CSPRNG (`randombytes_buf`).
    public static func random(count: Int) -> SecureBytes {
        let bytes = SecureBytes(count: count)
        bytes.withUnsafeMutableBytes { SecureRandom.fill($0) }
        return bytes
    }

    deinit {
        sodium_memzero(base, Swift.max(count, 1))
        if count <= SecureSlab.slotSize { SecureSlab.shared.give(base) } else { sodium_free(base) }
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }

    /// Constant-time in the contents (`sodium_memcmp`); lengths are not secret and differ → false.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        if count == 0 { return true }
        return sodium_memcmp(base, other.base, count) == 0
    }

    /// Lowercase hex of the key bytes.
    ///
    /// **Only** for handing a key to something that takes text: the system keyring or SQLCipher's
    /// `PRAGMA key = "x'…'"`. The returned `String` cannot be wiped; keep it short-lived, never log it.
    public var hexForStorage: String {
        let hexCount = count * 2 + 1
        let text = UnsafeMutablePointer<CChar>.allocate(capacity: hexCount)
        defer {
            sodium_memzero(text, hexCount)
            text.deallocate()
        }
        // sodium_bin2hex is constant-time in the data.
        _ = sodium_bin2hex(text, hexCount, base.assumingMemoryBound(to: UInt8.self), count)
        return String(cString: text)
    }

    /// Parses hex (upper or lower case, no separators) in constant time; nil for odd length or
    /// any non-hex character.
    public convenience init?(hex: String) {
        var text = hex
        let parsed: SecureBytes? = text.withUTF8 { utf8 -> SecureBytes? in
            guard utf8.count % 2 == 0 else { return nil }
            let result = SecureBytes(count: utf8.count / 2)
            if utf8.isEmpty { return result }
            var written = 0
            var end: UnsafePointer<CChar>? = nil
            let status = utf8.withMemoryRebound(to: CChar.self) { chars in
                result.withUnsafeMutableBytes { out in
                    sodium_hex2bin(out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
                                   chars.baseAddress!, chars.count, nil, &written, &end)
                }
            }
            guard status == 0, written == result.count else { return nil }
            return result
        }
        guard let parsed else { return nil }
        self.init(count: parsed.count)
        parsed.withUnsafeBytes { source in
            if let start = source.baseAddress, source.count > 0 {
                base.copyMemory(from: start, byteCount: source.count)
            }
        }
    }

    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }

    /// True when `mlock` works in this process (RLIMIT_MEMLOCK permits it). When false, key pages
    /// may be swapped out; the vault warns about it.
    public static var memoryLockingAvailable: Bool { memoryLockingProbe }
}

/// Slots for small keys in locked memory: regions of 256 slots of 64 bytes, each from one
/// `sodium_malloc` (guard pages around the region, `mlock`ed where permitted), taken and given
/// back under a lock. A region is never released (the slots are wiped as each key goes): the
/// process keeps one region per 256 small keys it held at the same time, at its peak.
final class SecureSlab: @unchecked Sendable {
    static let shared = SecureSlab()
    static let slotSize = 64
    static let slotsPerRegion = 256
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var free: [UnsafeMutableRawPointer] = []

    private init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    /// A slot of `slotSize` bytes (not zeroed).
    func take() -> UnsafeMutableRawPointer {
        pthread_mutex_lock(mutex); defer { pthread_mutex_unlock(mutex) }
        if free.isEmpty {
            guard let region = sodium_malloc(Self.slotSize * Self.slotsPerRegion) else {
                fatalError("sodium_malloc(\(Self.slotSize * Self.slotsPerRegion)) failed: out of memory")
            }
            free.reserveCapacity(free.count + Self.slotsPerRegion)
            for i in stride(from: Self.slotsPerRegion - 1, through: 0, by: -1) { free.append(region + i * Self.slotSize) }
        }
        return free.removeLast()
    }

    /// Returns a slot (its bytes wiped by the caller).
    func give(_ slot: UnsafeMutableRawPointer) {
        pthread_mutex_lock(mutex); defer { pthread_mutex_unlock(mutex) }
        free.append(slot)
    }
}

/// Probed once: lock and unlock one page.
private let memoryLockingProbe: Bool = {
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: pageSize)
    defer { page.deallocate() }
    guard mlock(page, pageSize) == 0 else { return false }
    munlock(page, pageSize)
    return true
}()

/// Constant-time equality of two byte collections (the time depends only on the lengths).
/// Different lengths → false.
public func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}
