internal import CSodium

/// The operating system's CSPRNG through libsodium's `randombytes_buf` (getrandom(2) on Linux).
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "negative random byte count")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// A random (version 4) UUID as lowercase text, `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`: one
    /// draw from the CSPRNG (Foundation's `UUID()` opens and reads `/dev/urandom` each time).
    public static func uuidString() -> String {
        var b = bytes(16)
        b[6] = (b[6] & 0x0f) | 0x40   // version 4
        b[8] = (b[8] & 0x3f) | 0x80   // RFC 4122 variant
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, byte) in b.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Fills `buf` with random bytes.
    public static func fill(_ buf: UnsafeMutableRawBufferPointer) {
        guard let start = buf.baseAddress, buf.count > 0 else { return }
        ensureSodium()
        randombytes_buf(start, buf.count)
    }
}
