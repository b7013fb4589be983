import Foundation
import VaultHTTP
#if canImport(Glibc)
import Glibc
#endif

/// The test pattern shared with echo_server.py: byte at offset i is i % 251.
enum Pattern {
    static let period = 251
    /// Enough pattern to copy any piece up to 4 MiB from any phase.
    static let block: [UInt8] = (0..<(4 << 20) + period).map { UInt8($0 % period) }

    /// Fills `buffer` with the pattern starting at absolute `offset`.
    static func fill(_ buffer: UnsafeMutableRawBufferPointer, offset: Int64) {
        let phase = Int(offset % Int64(period))
        block.withUnsafeBytes { src in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[phase..<(phase + buffer.count)]))
        }
    }

    /// Whether `piece` equals the pattern at absolute `offset`.
    static func matches(_ piece: UnsafeRawBufferPointer, offset: Int64) -> Bool {
        let phase = Int(offset % Int64(period))
        return block.withUnsafeBytes { src in
            memcmp(src.baseAddress! + phase, piece.baseAddress!, piece.count) == 0
        }
    }
}

/// Resident set size of this process now, in bytes (`/proc/self/statm`).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Parses a collected JSON body.
func json(_ response: HTTPResponse) throws -> [String: Any] {
    guard let obj = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
        throw TestFailure("not a JSON object: \(String(decoding: response.body, as: UTF8.self))")
    }
    return obj
}

/// The request headers the server saw, lower-cased names.
func seenHeaders(_ response: HTTPResponse) throws -> [String: String] {
    let list = try json(response)["headers"] as? [[String]] ?? []
    var out: [String: String] = [:]
    for pair in list where pair.count == 2 { out[pair[0].lowercased()] = pair[1] }
    return out
}

struct Boom: Error, Equatable {}
