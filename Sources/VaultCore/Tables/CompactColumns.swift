import VaultSQL
import VaultSyncPlan

/// The compact forms of schema 8 (issue 21, SECURITY.md "Metadata database"): server ids stored
/// as their 16 bytes, and a base's content record as a short binary record instead of JSON.
/// Both round-trip exactly: what does not have the compact shape is stored as it is.
enum CompactColumns {
    // MARK: - Server ids

    /// A server id as stored: a 32-digit lowercase hex id as its 16 bytes (a BLOB), anything
    /// else (`root`, an id of another shape) as TEXT. Every comparison binds this form.
    static func key(_ id: String) -> SQLValue {
        if let bytes = hexBytes(id, count: 16) { return .blob(bytes) }
        return .text(id)
    }

    /// `key(id)` for an optional id (NULL for nil).
    static func key(_ id: String?) -> SQLValue { id.map(key) ?? .null }

    /// Rewrites every id `table.column` holds as TEXT in its stored `form` (a migration's step:
    /// by default `key`, so the ids of 32 lowercase hex digits become 16 bytes; the ids `form`
    /// leaves as TEXT stay as they are).
    static func rekey(_ db: SQLDatabase, table: String, column: String, as form: (String) -> SQLValue = key) throws {
        var keyed: [(Int64, SQLValue)] = []
        for r in try db.query("SELECT rowid AS r, \(column) AS v FROM \(table) WHERE typeof(\(column)) = 'text'") {
            let k = form(try r.decode(String.self, "v"))
            if case .blob = k { keyed.append((try r.decode(Int64.self, "r"), k)) }
        }
        for (rowid, k) in keyed { try db.run("UPDATE \(table) SET \(column) = ? WHERE rowid = ?", [k, rowid]) }
    }

    /// The id a stored key holds (BLOB: 16 bytes back to hex; TEXT as it is; NULL: nil).
    static func id(_ v: SQLValue, column: String) throws -> String? {
        switch v {
        case .null: return nil
        case .text(let s): return s
        case .blob(let b) where b.count == 16: return lowerHex(b[...])
        default: throw damaged(column)
        }
    }

    // MARK: - Request ids (schema 14)

    /// A request id as stored (schema 14's `outbox.request_id` and `transfers.request_id`): a
    /// lowercase UUID (8-4-4-4-12 hex digits) as its 16 bytes (a BLOB), anything else as TEXT.
    /// The outbox and the transfers bind this one form, so their ids still compare equal.
    static func requestKey(_ id: String) -> SQLValue {
        if let bytes = uuidBytes(id) { return .blob(bytes) }
        return .text(id)
    }

    /// `requestKey(id)` for an optional id (NULL for nil).
    static func requestKey(_ id: String?) -> SQLValue { id.map(requestKey) ?? .null }

    /// The request id a stored key holds (BLOB: 16 bytes back to the UUID; TEXT as it is; NULL: nil).
    static func requestId(_ v: SQLValue, column: String) throws -> String? {
        switch v {
        case .null: return nil
        case .text(let s): return s
        case .blob(let b) where b.count == 16: return uuidText(b[...])
        default: throw damaged(column)
        }
    }

    // MARK: - Digests

    /// A SHA-256 as stored (schema 9's `nodes.sha256`): 64 lowercase hex digits as their 32
    /// bytes (a BLOB), anything else as TEXT, nil as NULL.
    static func digest(_ hex: String?) -> SQLValue {
        guard let hex else { return .null }
        if let bytes = hexBytes(hex, count: 32) { return .blob(bytes) }
        return .text(hex)
    }

    /// The SHA-256 a stored digest holds (BLOB: 32 bytes back to hex; TEXT as it is; NULL: nil).
    static func digest(_ v: SQLValue, column: String) throws -> String? {
        switch v {
        case .null: return nil
        case .text(let s): return s
        case .blob(let b) where b.count == 32: return lowerHex(b[...])
        default: throw damaged(column)
        }
    }

    // MARK: - Content records

    /// The first byte of a compact content record (its format).
    static let recordFormat: UInt8 = 1

    /// `c` as a compact record: the format byte, then blob, device, device name, mime, mtime,
    /// sealed size, seq, SHA-256, size, v. A string is a tag and its bytes (0: UTF-8 with a
    /// varint length; 1: 32 lowercase hex digits as 16 bytes; 2: 64 as 32 bytes; 3: a lowercase
    /// UUID as 16 bytes; 4: absent, the device name only); an integer is a zigzag LEB128 varint.
    static func record(_ c: ContentRecord) -> [UInt8] {
        var out: [UInt8] = [recordFormat]
        out.reserveCapacity(112)
        putString(c.blob, &out); putString(c.device, &out)
        putOptionalString(c.deviceName, &out)
        putString(c.mime, &out)
        putInt(c.mtime, &out); putInt(c.sealedSize, &out); putInt(c.seq, &out)
        putString(c.sha256, &out)
        putInt(c.size, &out); putInt(Int64(c.v), &out)
        return out
    }

    /// The content record a compact record holds; throws `SQLError.Kind.decoding` naming
    /// `column` when it is damaged (truncated, an unknown tag or format, bytes left over).
    static func content(_ bytes: [UInt8], column: String) throws -> ContentRecord {
        var r = Reader(bytes: bytes)
        guard r.byte() == recordFormat,
              let blob = r.string(), let device = r.string(), let name = r.optionalString(), let mime = r.string(),
              let mtime = r.int(), let sealedSize = r.int(), let seq = r.int(), let sha = r.string(),
              let size = r.int(), let v = r.int(), r.atEnd, let version = Int(exactly: v) else { throw damaged(column) }
        var c = ContentRecord(blob: blob, device: device, deviceName: name, mime: mime, mtime: mtime,
                              sealedSize: sealedSize, seq: seq, sha256: sha, size: size)
        c.v = version
        return c
    }

    /// The first byte of a schema-10 base's record (`blobRecord`).
    static let blobRecordFormat: UInt8 = 2

    /// The part of `c` schema 10's `remote_base.content` holds (its mime, mtime, size and
    /// SHA-256 are columns beside it, so a base can take them from its node): format byte `2`,
    /// then blob, device, device name, sealed size, seq, v, encoded as in `record`.
    static func blobRecord(_ c: ContentRecord) -> [UInt8] {
        var out: [UInt8] = [blobRecordFormat]
        out.reserveCapacity(48)
        putString(c.blob, &out); putString(c.device, &out)
        putOptionalString(c.deviceName, &out)
        putInt(c.sealedSize, &out); putInt(c.seq, &out); putInt(Int64(c.v), &out)
        return out
    }

    /// The content record a `blobRecord` and its columns hold; throws `SQLError.Kind.decoding`
    /// naming `column` when the record is damaged.
    static func content(blobRecord bytes: [UInt8], mime: String, mtime: Int64, size: Int64, sha256: String,
                        column: String) throws -> ContentRecord {
        var r = Reader(bytes: bytes)
        guard r.byte() == blobRecordFormat, let blob = r.string(), let device = r.string(), let name = r.optionalString(),
              let sealedSize = r.int(), let seq = r.int(), let v = r.int(), r.atEnd, let version = Int(exactly: v) else {
            throw damaged(column)
        }
        var c = ContentRecord(blob: blob, device: device, deviceName: name, mime: mime, mtime: mtime,
                              sealedSize: sealedSize, seq: seq, sha256: sha256, size: size)
        c.v = version
        return c
    }

    // MARK: - Outbox payloads (schema 11)

    /// The first byte of a compact outbox payload (schema 11's `outbox.payload`).
    static let payloadFormat: UInt8 = 3

    /// The fields of a payload, in the order they follow the mask (bit `n` set: field `n` present).
    private enum PayloadField: Int, CaseIterable {
        case name, parentId, remoteId, blobId, size, sha256, mimeType, uploadId, replacesMove, reseal, clientId
        var bit: UInt64 { 1 << UInt64(rawValue) }
    }

    /// `p` as a compact payload: format byte `3`, a varint mask of the fields present, then each
    /// present field in `PayloadField` order. Strings as in `record`, except the node ids
    /// `parentId` and `remoteId`: a 32-digit lowercase hex id as tag 1 and its 16 bytes, any
    /// other as tag 0 and its UTF-8 (so the bytes of a stored node key appear in the payload, and
    /// `instr(payload, CAST(key AS BLOB))` finds an entry that names a node); the size a varint;
    /// the two flags one byte each (0 or 1).
    static func payload(_ p: OutboxPayload) -> [UInt8] {
        let present: [PayloadField: Bool] = [
            .name: p.name != nil, .parentId: p.parentId != nil, .remoteId: p.remoteId != nil, .blobId: p.blobId != nil,
            .size: p.size != nil, .sha256: p.sha256 != nil, .mimeType: p.mimeType != nil, .uploadId: p.uploadId != nil,
            .replacesMove: p.replacesMove != nil, .reseal: p.reseal != nil, .clientId: p.clientId != nil,
        ]
        var mask: UInt64 = 0
        for f in PayloadField.allCases where present[f] == true { mask |= f.bit }
        var out: [UInt8] = [payloadFormat]
        out.reserveCapacity(96)
        putVarint(mask, &out)
        if let s = p.name { putString(s, &out) }
        if let s = p.parentId { putKeyString(s, &out) }
        if let s = p.remoteId { putKeyString(s, &out) }
        if let s = p.blobId { putString(s, &out) }
        if let n = p.size { putVarint(n, &out) }
        if let s = p.sha256 { putString(s, &out) }
        if let s = p.mimeType { putString(s, &out) }
        if let s = p.uploadId { putString(s, &out) }
        if let b = p.replacesMove { out.append(b ? 1 : 0) }
        if let b = p.reseal { out.append(b ? 1 : 0) }
        if let s = p.clientId { putString(s, &out) }
        return out
    }

    /// The payload a compact payload holds; throws `SQLError.Kind.decoding` naming `column` when
    /// it is damaged (truncated, an unknown format, tag or field, bytes left over).
    static func payload(_ bytes: [UInt8], column: String) throws -> OutboxPayload {
        var r = Reader(bytes: bytes)
        guard r.byte() == payloadFormat, let mask = r.varint(), mask >> UInt64(PayloadField.allCases.count) == 0 else { throw damaged(column) }
        func has(_ f: PayloadField) -> Bool { mask & f.bit != 0 }
        func string(_ f: PayloadField) throws -> String? {
            guard has(f) else { return nil }
            guard let s = r.string() else { throw damaged(column) }
            return s
        }
        func flag(_ f: PayloadField) throws -> Bool? {
            guard has(f) else { return nil }
            guard let b = r.byte(), b <= 1 else { throw damaged(column) }
            return b == 1
        }
        var p = OutboxPayload()
        p.name = try string(.name)
        p.parentId = try string(.parentId)
        p.remoteId = try string(.remoteId)
        p.blobId = try string(.blobId)
        if has(.size) {
            guard let n = r.varint() else { throw damaged(column) }
            p.size = n
        }
        p.sha256 = try string(.sha256)
        p.mimeType = try string(.mimeType)
        p.uploadId = try string(.uploadId)
        p.replacesMove = try flag(.replacesMove)
        p.reseal = try flag(.reseal)
        p.clientId = try string(.clientId)
        guard r.atEnd else { throw damaged(column) }
        return p
    }

    // MARK: - Encoding

    private enum Tag: UInt8 { case text = 0, hex16 = 1, hex32 = 2, uuid = 3, absent = 4 }

    /// A node id as its stored key's bytes: a 32-digit lowercase hex id as tag 1 and 16 bytes,
    /// anything else as tag 0 and its UTF-8 (never the UUID form: a text key is its UTF-8).
    private static func putKeyString(_ s: String, _ out: inout [UInt8]) {
        if let b = hexBytes(s, count: 16) { out.append(Tag.hex16.rawValue); out += b; return }
        out.append(Tag.text.rawValue)
        putVarint(UInt64(s.utf8.count), &out)
        out += s.utf8
    }

    private static func putString(_ s: String, _ out: inout [UInt8]) {
        if let b = hexBytes(s, count: 16) { out.append(Tag.hex16.rawValue); out += b; return }
        if let b = hexBytes(s, count: 32) { out.append(Tag.hex32.rawValue); out += b; return }
        if let b = uuidBytes(s) { out.append(Tag.uuid.rawValue); out += b; return }
        out.append(Tag.text.rawValue)
        putVarint(UInt64(s.utf8.count), &out)
        out += s.utf8
    }

    /// A string, or the `absent` tag for nil (read by `Reader.optionalString`).
    private static func putOptionalString(_ s: String?, _ out: inout [UInt8]) {
        if let s { putString(s, &out) } else { out.append(Tag.absent.rawValue) }
    }

    private static func putInt(_ v: Int64, _ out: inout [UInt8]) {
        putVarint(UInt64(bitPattern: (v << 1) ^ (v >> 63)), &out)
    }

    private static func putVarint(_ v: UInt64, _ out: inout [UInt8]) {
        var v = v
        while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        out.append(UInt8(v))
    }

    /// The bytes of `s` when it is exactly `count * 2` lowercase hex digits.
    private static func hexBytes(_ s: String, count: Int) -> [UInt8]? {
        var s = s
        return s.withUTF8 { u -> [UInt8]? in
            guard u.count == count * 2 else { return nil }
            var ok = true
            let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                initialized = 0
                for i in 0..<count {
                    guard let h = lowerHexDigit(u[2 * i]), let l = lowerHexDigit(u[2 * i + 1]) else { ok = false; return }
                    buffer[i] = h << 4 | l
                }
                initialized = count
            }
            return ok ? out : nil
        }
    }

    /// The 16 bytes of a lowercase UUID (8-4-4-4-12 hex digits), else nil.
    private static func uuidBytes(_ s: String) -> [UInt8]? {
        var s = s
        return s.withUTF8 { u -> [UInt8]? in
            guard u.count == 36, u[8] == UInt8(ascii: "-"), u[13] == UInt8(ascii: "-"), u[18] == UInt8(ascii: "-"),
                  u[23] == UInt8(ascii: "-") else { return nil }
            var out = [UInt8](); out.reserveCapacity(16)
            var i = 0
            while i < 36 {
                if i == 8 || i == 13 || i == 18 || i == 23 { i += 1; continue }
                guard let h = lowerHexDigit(u[i]), let l = lowerHexDigit(u[i + 1]) else { return nil }
                out.append(h << 4 | l)
                i += 2
            }
            return out
        }
    }

    private static func lowerHexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    private static func lowerHex(_ b: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](); out.reserveCapacity(b.count * 2)
        for x in b { out.append(digits[Int(x >> 4)]); out.append(digits[Int(x & 0xF)]) }
        return String(decoding: out, as: UTF8.self)
    }

    private static func uuidText(_ b: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, c) in lowerHex(b).utf8.enumerated() {
            if i == 8 || i == 12 || i == 16 || i == 20 { out.append(UInt8(ascii: "-")) }
            out.append(c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func damaged(_ column: String) -> SQLError {
        SQLError(kind: .decoding, code: .mismatch, message: "column \"\(column)\" holds a damaged compact value")
    }

    // MARK: - Decoding

    private struct Reader {
        let bytes: [UInt8]
        var at = 0
        var atEnd: Bool { at == bytes.count }

        mutating func byte() -> UInt8? {
            guard at < bytes.count else { return nil }
            defer { at += 1 }
            return bytes[at]
        }

        mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
            guard n >= 0, bytes.count - at >= n else { return nil }
            defer { at += n }
            return bytes[at..<(at + n)]
        }

        mutating func varint() -> UInt64? {
            var v: UInt64 = 0
            for shift in stride(from: 0, to: 70, by: 7) {
                guard let b = byte(), shift < 64 else { return nil }
                v |= UInt64(b & 0x7F) << UInt64(shift)
                if b < 0x80 { return v }
            }
            return nil
        }

        mutating func int() -> Int64? {
            guard let z = varint() else { return nil }
            return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
        }

        mutating func optionalString() -> String?? {
            guard at < bytes.count else { return nil }
            if bytes[at] == Tag.absent.rawValue { at += 1; return .some(nil) }
            return string().map { .some($0) }
        }

        mutating func string() -> String? {
            guard let t = byte().flatMap(Tag.init(rawValue:)) else { return nil }
            switch t {
            case .text:
                guard let n = varint(), n <= UInt64(bytes.count), let b = take(Int(n)),
                      let s = String(validating: b, as: UTF8.self) else { return nil }
                return s
            case .hex16: return take(16).map(CompactColumns.lowerHex)
            case .hex32: return take(32).map(CompactColumns.lowerHex)
            case .uuid: return take(16).map(CompactColumns.uuidText)
            case .absent: return nil
            }
        }
    }
}
