import Foundation
import VaultSyncPlan

/// A fast path for decoding the small records the codec opens (a large pull opens two per node,
/// and Foundation's `JSONDecoder` took most of that time). It reads only the canonical form our
/// encoder writes: one flat object of distinct ASCII keys whose values are strings (simple
/// escapes only), integers (`-?[1-9][0-9]*` or `0`, within Int64) or `true`/`false`/`null`.
/// Anything else — nesting, floats, `\u` escapes, duplicate keys, a missing member or one of the
/// wrong type — returns nil, and the caller decodes with `JSONDecoder`, which decides (accepts
/// or refuses) exactly as before: the fast path only ever agrees with it.
enum RecordJSON {
    enum Value {
        case string(String)
        case int(Int64)
        /// `true`, `false` or `null`: never a value a record member takes.
        case literal
    }

    /// Calls `member` with each key and value of the flat object in `b`, in order; false when `b`
    /// is not such an object or `member` returned false.
    static func members(_ b: UnsafeRawBufferPointer, _ member: (String, Value) -> Bool) -> Bool {
        var i = 0
        let n = b.count
        @inline(__always) func skipSpace() {
            while i < n, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
        }
        /// A string starting at the quote `b[i]`; nil for anything unusual.
        func string(asciiOnly: Bool) -> String? {
            i += 1
            let start = i
            var escaped = false
            while i < n, b[i] != 0x22 {
                let c = b[i]
                if c < 0x20 || (asciiOnly && c >= 0x80) { return nil }
                if c == 0x5C {
                    if asciiOnly { return nil }
                    escaped = true
                    i += 1
                    guard i < n else { return nil }
                    switch b[i] {
                    case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74: break
                    default: return nil   // \u and anything invalid
                    }
                }
                i += 1
            }
            guard i < n else { return nil }
            let raw = UnsafeRawBufferPointer(rebasing: b[start..<i])
            i += 1
            guard escaped else { return String(validating: raw, as: UTF8.self) }
            var out: [UInt8] = []
            out.reserveCapacity(raw.count)
            var k = 0
            while k < raw.count {
                var c = raw[k]
                if c == 0x5C {
                    k += 1
                    switch raw[k] {
                    case 0x62: c = 0x08
                    case 0x66: c = 0x0C
                    case 0x6E: c = 0x0A
                    case 0x72: c = 0x0D
                    case 0x74: c = 0x09
                    default: c = raw[k]   // " \ /
                    }
                }
                out.append(c)
                k += 1
            }
            return String(validating: out, as: UTF8.self)
        }
        func integer() -> Int64? {
            let negative = b[i] == 0x2D
            if negative { i += 1 }
            guard i < n, b[i] >= 0x30, b[i] <= 0x39 else { return nil }
            if b[i] == 0x30 {
                i += 1
                if negative { return nil }   // -0: left to JSONDecoder
                if i < n, (b[i] >= 0x30 && b[i] <= 0x39) { return nil }
                return numberEnds() ? 0 : nil
            }
            var v: Int64 = 0
            while i < n, b[i] >= 0x30, b[i] <= 0x39 {
                let d = Int64(b[i] - 0x30)
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (s, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
                guard !o1, !o2 else { return nil }
                v = s
                i += 1
            }
            return numberEnds() ? v : nil
        }
        func numberEnds() -> Bool {
            i >= n || b[i] == 0x2C || b[i] == 0x7D || b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09
        }
        func literal(_ word: StaticString) -> Bool {
            let w = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard i + w.count <= n, w.elementsEqual(UnsafeRawBufferPointer(rebasing: b[i..<(i + w.count)])) else { return false }
            i += w.count
            return true
        }

        skipSpace()
        guard i < n, b[i] == 0x7B else { return false }
        i += 1
        skipSpace()
        if i < n, b[i] == 0x7D {
            i += 1
        } else {
            while true {
                skipSpace()
                guard i < n, b[i] == 0x22, let key = string(asciiOnly: true) else { return false }
                skipSpace()
                guard i < n, b[i] == 0x3A else { return false }
                i += 1
                skipSpace()
                guard i < n else { return false }
                let value: Value
                switch b[i] {
                case 0x22:
                    guard let s = string(asciiOnly: false) else { return false }
                    value = .string(s)
                case 0x2D, 0x30...0x39:
                    guard let v = integer() else { return false }
                    value = .int(v)
                case 0x74:
                    guard literal("true") else { return false }
                    value = .literal
                case 0x66:
                    guard literal("false") else { return false }
                    value = .literal
                case 0x6E:
                    guard literal("null") else { return false }
                    value = .literal
                default:
                    return false   // nested objects and arrays
                }
                guard member(key, value) else { return false }
                skipSpace()
                guard i < n else { return false }
                if b[i] == 0x2C { i += 1; continue }
                guard b[i] == 0x7D else { return false }
                i += 1
                break
            }
        }
        skipSpace()
        return i == n
    }

    /// An optional string member: `.some(nil)` when absent, `.some(s)` for a string, nil (not the
    /// fast path's to decide) for any other value, `null` included.
    static func optionalString(_ v: Value?) -> String?? {
        switch v {
        case nil: return .some(nil)
        case .string(let s)?: return .some(s)
        default: return nil
        }
    }

    /// Collects the members named `keys` (each at most once; others ignored); nil on a duplicate
    /// or anything `members` refuses.
    static func fields(_ b: UnsafeRawBufferPointer, _ keys: [String]) -> [Value?]? {
        var out = [Value?](repeating: nil, count: keys.count)
        var seen = Set<String>()
        let ok = members(b) { key, value in
            guard seen.insert(key).inserted else { return false }
            if let k = keys.firstIndex(of: key) { out[k] = value }
            return true
        }
        return ok ? out : nil
    }
}

/// A record the codec can decode by `RecordJSON`'s fast path (nil: use `JSONDecoder`).
protocol FastRecordDecodable: Decodable {
    static func fastDecode(_ b: UnsafeRawBufferPointer) -> Self?
}

private extension Optional where Wrapped == RecordJSON.Value {
    var string: String? { if case .string(let s)? = self { s } else { nil } }
    var int: Int64? { if case .int(let v)? = self { v } else { nil } }
}

extension NodeRecord: FastRecordDecodable {
    static let keys = ["device", "mtime", "name", "parent", "seq", "type", "v", "deviceName"]

    static func fastDecode(_ b: UnsafeRawBufferPointer) -> NodeRecord? {
        guard let f = RecordJSON.fields(b, keys), let device = f[0].string, let mtime = f[1].int, let name = f[2].string,
              let parent = f[3].string, let seq = f[4].int, let type = f[5].string, let v = f[6].int,
              let deviceName = RecordJSON.optionalString(f[7]) else { return nil }
        var r = NodeRecord(device: device, deviceName: deviceName, mtime: mtime, name: name, parent: parent, seq: seq, isFolder: false)
        r.type = type
        r.v = Int(v)
        return r
    }
}

extension ContentRecord: FastRecordDecodable {
    static let keys = ["blob", "device", "mime", "mtime", "sealedSize", "seq", "sha256", "size", "v", "deviceName"]

    static func fastDecode(_ b: UnsafeRawBufferPointer) -> ContentRecord? {
        guard let f = RecordJSON.fields(b, keys), let blob = f[0].string, let device = f[1].string, let mime = f[2].string,
              let mtime = f[3].int, let sealedSize = f[4].int, let seq = f[5].int, let sha256 = f[6].string,
              let size = f[7].int, let v = f[8].int, let deviceName = RecordJSON.optionalString(f[9]) else { return nil }
        var r = ContentRecord(blob: blob, device: device, deviceName: deviceName, mime: mime, mtime: mtime, sealedSize: sealedSize, seq: seq,
                              sha256: sha256, size: size)
        r.v = Int(v)
        return r
    }

    /// The JSON a base's content record is stored as, written directly: byte for byte what a
    /// JSONEncoder with sorted keys writes (`"`, `\\` and `/` escaped); nil when a member holds a
    /// control character (the caller then uses the encoder, whose escapes stay exact).
    static func storedJSON(_ c: ContentRecord) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        func key(_ k: StaticString) {
            out.append(out.isEmpty ? 0x7B : 0x2C)
            out.append(0x22)
            out.append(contentsOf: UnsafeBufferPointer(start: k.utf8Start, count: k.utf8CodeUnitCount))
            out.append(0x22); out.append(0x3A)
        }
        func string(_ k: StaticString, _ v: String) -> Bool {
            key(k)
            out.append(0x22)
            for b in v.utf8 {
                if b < 0x20 { return false }
                if b == 0x22 || b == 0x5C || b == 0x2F { out.append(0x5C) }
                out.append(b)
            }
            out.append(0x22)
            return true
        }
        func int(_ k: StaticString, _ v: Int64) {
            key(k)
            out.append(contentsOf: String(v).utf8)
        }
        guard string("blob", c.blob), string("device", c.device), c.deviceName.map({ string("deviceName", $0) }) ?? true,
              string("mime", c.mime) else { return nil }
        int("mtime", c.mtime); int("sealedSize", c.sealedSize); int("seq", c.seq)
        guard string("sha256", c.sha256) else { return nil }
        int("size", c.size); int("v", Int64(c.v))
        out.append(0x7D)
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes a content record stored as JSON (the fast path, else `JSONDecoder`).
    static func decode(json: String) -> ContentRecord? {
        var s = json
        return s.withUTF8 { u in
            let raw = UnsafeRawBufferPointer(u)
            return fastDecode(raw) ?? (try? JSONDecoder().decode(ContentRecord.self, from: Data(raw)))
        }
    }
}
