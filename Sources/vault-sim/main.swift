import VaultSimulation
#if canImport(Glibc)
import Glibc
#endif

// vault-sim: runs the two-way sync simulation (Sources/VaultSimulation).
//   vault-sim N [--first S] [--steps K]   N seeds from S (default 1): prints seeds/s and failures
//   vault-sim --seed S [--steps K]        one seed, with its report
nonisolated(unsafe) var args = Array(CommandLine.arguments.dropFirst())
func value(_ name: String) -> UInt64? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count, let v = UInt64(args[i + 1]) else { return nil }
    args.removeSubrange(i...i + 1)
    return v
}
let steps = Int(value("--steps") ?? 80)
let verbose = args.contains("--verbose")
args.removeAll { $0 == "--verbose" }
if let seed = value("--seed") {
    let sim = Simulation(seed: seed)
    sim.verbose = verbose
    if let failure = sim.run(steps: steps) { print(failure); exit(1) }
    print("seed \(seed): ok")
    exit(0)
}
let first = value("--first") ?? 1
guard let count = args.first.flatMap(UInt64.init), count > 0 else {
    print("usage: vault-sim N [--first S] [--steps K] | vault-sim --seed S [--steps K]")
    exit(2)
}
let clock = ContinuousClock()
var failures: [String] = []
let took = clock.measure {
    for seed in first..<(first + count) {
        if let f = Simulation(seed: seed).run(steps: steps) { failures.append(f) }
    }
}
let seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
for f in failures.prefix(10) { print(f) }
print("simulation: \(count) seeds from \(first), \(steps) steps each, \(failures.count) failing, \(String(Int(Double(count) / max(seconds, 1e-9)))) seeds/s (\(String(Int(seconds * 1000))) ms)")
if !failures.isEmpty {
    print("failing seeds: " + failures.prefix(50).map { String($0.dropFirst(5).prefix { $0 != ":" }) }.joined(separator: " "))
    exit(1)
}
