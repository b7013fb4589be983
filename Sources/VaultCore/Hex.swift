/// Lowercase hex for identifiers and non-secret bytes.
enum Hex {
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](); out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count % 2 == 0 else { return nil }
        func nib(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var out = [UInt8](); out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let h = nib(u[i]), let l = nib(u[i + 1]) else { return nil }
            out.append(h << 4 | l); i += 2
        }
        return out
    }
}
