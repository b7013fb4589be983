import Foundation
import VaultPrimitives

/// The tests' seeded random number generator (SplitMix64, VaultPrimitives): the same seed gives
/// the same sequence on every platform and run, so a failing seed reproduces exactly.
public typealias SeededGenerator = SplitMix64

extension SplitMix64 {
    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
}

/// The seeds of the tests' randomness: one seed per run (`VAULT_TEST_SEED` when set, to replay a
/// run; else a fresh one), and from it one seed per test, derived from the test's name, so the
/// same run seed gives every test the same seed whichever tests run and in which order. Each
/// test's seed is printed at its first use, with the run seed that replays it.
public enum TestSeed {
    private static let lock = NSLock()
    // SAFETY: guarded by `lock`.
    nonisolated(unsafe) private static var printed: Set<String> = []

    /// The run's seed.
    public static let run: UInt64 = ProcessInfo.processInfo.environment["VAULT_TEST_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 1...UInt64.max)

    /// The seed of the test `what` (its `XCTestCase.name`, or another name of its own).
    public static func make(_ what: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325                       // FNV-1a of the name…
        for b in what.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        var g = SeededGenerator(seed: run ^ h)                       // …mixed with the run's seed
        let seed = g.next()
        let first = lock.withLock { printed.insert(what).inserted }
        if first { print("\(what): seed \(seed) (VAULT_TEST_SEED=\(run) replays it)") }
        return seed
    }
}

extension SeededGenerator {
    /// A generator seeded by `TestSeed.make(what)` (printed, replayable with `VAULT_TEST_SEED`).
    public init(test what: String) { self.init(seed: TestSeed.make(what)) }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var i = 0
        while i < count {
            var v = next()
            for _ in 0..<8 where i < count { out[i] = UInt8(truncatingIfNeeded: v); v >>= 8; i += 1 }
        }
        return out
    }
}

/// Random test data (file contents, junk requests) from one seeded generator per test: `key`
/// names the test (`XCTestCase.name`, or a file and function), its seed is printed at its first
/// use (`TestSeed`), and `VAULT_TEST_SEED` replays it.
public enum TestData {
    private static let lock = NSLock()
    // SAFETY: guarded by `lock`.
    nonisolated(unsafe) private static var generators: [String: SeededGenerator] = [:]

    /// Runs `body` with the generator of `key` (created, and its seed printed, on first use).
    public static func withGenerator<R>(for key: String, _ body: (inout SeededGenerator) -> R) -> R {
        lock.lock(); defer { lock.unlock() }
        var g = generators[key] ?? SeededGenerator(test: key)
        defer { generators[key] = g }
        return body(&g)
    }

    /// `count` seeded random bytes for the test `key`.
    public static func bytes(_ count: Int, for key: String) -> [UInt8] { withGenerator(for: key) { $0.bytes(count) } }

    /// `count` seeded random bytes for the test `key`, as `Data`.
    public static func data(_ count: Int, for key: String) -> Data { Data(bytes(count, for: key)) }
}
