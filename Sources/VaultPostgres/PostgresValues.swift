import VaultSQL

/// How `SQLValue`s travel to and from PostgreSQL in libpq's text format.
enum PostgresValues {
    /// Type OIDs (`pg_type.oid`, stable across servers) of the columns and parameters vault uses.
    enum OID {
        static let bool: UInt32 = 16, bytea: UInt32 = 17, int8: UInt32 = 20, int2: UInt32 = 21, int4: UInt32 = 23
        static let oid: UInt32 = 26, float4: UInt32 = 700, float8: UInt32 = 701, numeric: UInt32 = 1700
        /// Unspecified: the server infers the type from where the parameter is used (a text
        /// parameter then compares with TEXT columns and casts where the SQL says so).
        static let unknown: UInt32 = 0
    }

    /// A parameter: its type OID, its bytes (nil for NULL) and whether they are binary (bytea).
    struct Parameter {
        let type: UInt32
        let bytes: [UInt8]?
        let binary: Bool
    }

    /// The parameter for `value`: integers as int8, reals as float8, text as unknown, blobs binary.
    static func parameter(_ value: SQLValue) -> Parameter {
        switch value {
        case .null: return Parameter(type: OID.unknown, bytes: nil, binary: false)
        case .integer(let v): return Parameter(type: OID.int8, bytes: Array(String(v).utf8), binary: false)
        case .real(let v): return Parameter(type: OID.float8, bytes: Array(real(v).utf8), binary: false)
        case .text(let v): return Parameter(type: OID.unknown, bytes: Array(v.utf8), binary: false)
        case .blob(let v): return Parameter(type: OID.bytea, bytes: v, binary: true)
        }
    }

    /// A float8 in a form the server reads back as exactly the same double.
    static func real(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v < 0 ? "-Infinity" : "Infinity" }
        return "\(v)"   // Swift's shortest round-tripping form, e.g. 1733150000.25 or 1e-07
    }

    /// The value of a result field of type `oid` in text format, as SQLite's storage classes:
    /// integers and booleans as `.integer`, floating and numeric as `.real`, bytea as `.blob`,
    /// everything else as `.text`. A field that does not parse as its type is kept as text (and a
    /// typed decode of it then fails naming the column).
    static func value(oid: UInt32, text: String) -> SQLValue {
        switch oid {
        case OID.int8, OID.int4, OID.int2, OID.oid: return Int64(text).map(SQLValue.integer) ?? .text(text)
        case OID.bool: return .integer(text == "t" ? 1 : 0)
        case OID.float4, OID.float8, OID.numeric: return Double(text).map(SQLValue.real) ?? .text(text)
        case OID.bytea: return byteaHex(text).map(SQLValue.blob) ?? .text(text)
        default: return .text(text)
        }
    }

    /// The bytes of a bytea in the server's hex output format (`\x0a1b…`).
    static func byteaHex(_ text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count >= 2, u[0] == UInt8(ascii: "\\"), u[1] == UInt8(ascii: "x"), u.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity((u.count - 2) / 2)
        var i = 2
        while i < u.count {
            guard let hi = nibble(u[i]), let lo = nibble(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
