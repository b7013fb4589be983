import Foundation

extension APIJSON {
    /// The body `encoder()` writes for `list`, byte for byte, written directly: a listing page of
    /// 1,000 nodes through `JSONEncoder` took most of the reference server's time for it.
    public static func encode(_ list: FileList) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + list.files.count * 1100)
        out.append(contentsOf: #"{"files":["#.utf8)
        for (i, f) in list.files.enumerated() {
            if i > 0 { out.append(0x2C) }
            write(f, into: &out)
        }
        out.append(0x5D)
        if let t = list.nextPageToken { member("nextPageToken", t, &out) }
        out.append(0x7D)
        return out
    }

    /// The body `encoder()` writes for `f` (keys sorted, absent optionals left out).
    public static func encode(_ f: FileResource) -> [UInt8] {
        var out: [UInt8] = []
        write(f, into: &out)
        return out
    }

    static func write(_ f: FileResource, into out: inout [UInt8]) {
        out.append(0x7B)
        if let c = f.contentMeta { member("contentMeta", c, &out) }
        member("createdAt", formatDate(f.createdAt), &out)
        if let h = f.headRevisionId { member("headRevisionId", h, &out) }
        member("id", f.id, &out)
        if let m = f.meta { member("meta", m, &out) }
        member("mimeType", f.mimeType, &out)
        member("modifiedAt", formatDate(f.modifiedAt), &out)
        member("name", f.name, &out)
        if let p = f.parentId { member("parentId", p, &out) }
        if let s = f.sha256 { member("sha256", s, &out) }
        key("size", &out); integer(f.size, &out)
        key("trashed", &out); f.trashed ? out.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) : out.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
        member("type", f.type.rawValue, &out)
        key("version", &out); integer(f.version, &out)
        out.append(0x7D)
    }

    /// `"name":` after a comma unless the object or array has just opened.
    private static func key(_ name: StaticString, _ out: inout [UInt8]) {
        if let last = out.last, last != 0x7B, last != 0x5B { out.append(0x2C) }
        out.append(0x22)
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out += [0x22, 0x3A]
    }

    private static func integer(_ v: Int64, _ out: inout [UInt8]) {
        var s = String(v)
        s.withUTF8 { out.append(contentsOf: $0) }
    }

    private static func member(_ name: StaticString, _ value: String, _ out: inout [UInt8]) {
        key(name, &out)
        string(value, &out)
    }

    /// A JSON string as `encoder()` writes it: `"` and `\` escaped, slashes not; a string with a
    /// control character goes through the encoder itself (rare, and its escapes stay exact).
    private static func string(_ s: String, _ out: inout [UInt8]) {
        var s = s
        s.withUTF8 { u in
            var plain = true
            for c in u where c < 0x20 || c == 0x22 || c == 0x5C { plain = false; break }
            if plain {
                out.append(0x22)
                out.append(contentsOf: u)
                out.append(0x22)
            } else if u.contains(where: { $0 < 0x20 }) {
                out += (try? encoder().encode(String(decoding: u, as: UTF8.self))).map { [UInt8]($0) } ?? [0x22, 0x22]
            } else {
                out.append(0x22)
                for c in u {
                    if c == 0x22 || c == 0x5C { out.append(0x5C) }
                    out.append(c)
                }
                out.append(0x22)
            }
        }
    }
}
