import Foundation
import VaultAPI

/// `/v1/test/faults`: only with `--test-faults`; otherwise these routes answer 404.
extension VaultService {
    func getFaults(_ ctx: RequestContext) throws -> RequestPlan {
        guard config.testFaults else { throw APIError.notFound("no such route") }
        return Self.respond(faults.current)
    }

    func setFaults(_ ctx: RequestContext) throws -> RequestPlan {
        guard config.testFaults else { throw APIError.notFound("no such route") }
        return .buffer(limit: Self.jsonLimit) { [self] body in
            let settings = try decode(FaultSettings.self, body)
            if let lie = settings.lie, let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
               let nested = try? JSONSerialization.data(withJSONObject: object["lie"] ?? [:]) {
                try Self.requireObjectWithoutNulls([UInt8](nested), decoded: lie)   // no null inside the lie either
            }
            try Self.validate(settings)
            faults.set(settings)
            if settings.expireSessionsNow == true {
                try store.withDB { db in try db.expireAllUploadSessions(at: Date().addingTimeInterval(-1)) }
                sweepExpiredUploads()
                sweepContentIfDue(force: true)
            }
            return .json(faults.current)
        }
    }

    /// The bounds of every fault switch (`docs/openapi.yaml` lists the same): a setting outside
    /// them is a 400 and changes nothing, so no later request can trip over it (an `errorStatus`
    /// of -1 once killed the server on the next request).
    static var faultBounds: [(name: String, path: KeyPath<FaultSettings, Int64?>, range: ClosedRange<Int64>)] { [
        ("dropAfterBytes", \.dropAfterBytes, 0...Int64.max),
        ("dropCount", \.dropCount64, 1...1_000_000),
        ("delayMs", \.delayMs64, 0...60_000),
        ("errorStatus", \.errorStatus64, 400...599),
        ("retryAfter429Count", \.retryAfter429Count64, 0...1_000_000),
        ("retryAfterSeconds", \.retryAfterSeconds64, 0...86_400),
        ("extraContentBytes", \.extraContentBytes64, 0...(1 << 40)),
        ("contentPieceDelayMs", \.contentPieceDelayMs64, 0...10_000),
        ("clockAheadSeconds", \.clockAheadSeconds64, 0...31_536_000),
        ("errorSeed", \.errorSeed, 0...Int64.max),
    ] }

    static func validate(_ s: FaultSettings) throws {
        for bound in faultBounds {
            if let v = s[keyPath: bound.path], !bound.range.contains(v) {
                throw APIError.badRequest("\(bound.name) must be \(bound.range.lowerBound)…\(bound.range.upperBound)",
                                          code: .invalidFault)
            }
        }
        if let rate = s.errorRate, !(rate >= 0 && rate <= 1) {
            throw APIError.badRequest("errorRate must be 0…1", code: .invalidFault)
        }
        if let ranges = s.lie?.ranges, !ranges.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0 >= 0 } }) {
            throw APIError.badRequest("lie.ranges must be [start, end] pairs of byte positions ≥ 0", code: .invalidFault)
        }
    }
}

private extension FaultSettings {
    var dropCount64: Int64? { dropCount.map(Int64.init) }
    var delayMs64: Int64? { delayMs.map(Int64.init) }
    var errorStatus64: Int64? { errorStatus.map(Int64.init) }
    var retryAfter429Count64: Int64? { retryAfter429Count.map(Int64.init) }
    var retryAfterSeconds64: Int64? { retryAfterSeconds.map(Int64.init) }
    var extraContentBytes64: Int64? { extraContentBytes.map(Int64.init) }
    var contentPieceDelayMs64: Int64? { contentPieceDelayMs.map(Int64.init) }
    var clockAheadSeconds64: Int64? { clockAheadSeconds.map(Int64.init) }
}
