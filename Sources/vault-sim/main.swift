import Foundation
import VaultArguments
import VaultSimulation
#if canImport(Glibc)
import Glibc
#endif

/// vault-sim: runs the two-way sync simulation (Sources/VaultSimulation) on the shared
/// command-line parser: COUNT seeds from --first (seeds per second and failures), or one --seed
/// with its report.
struct SimProgram: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "vault-sim", abstract: "run the two-way sync simulation for many seeds, or one seed with its report",
                             discussion: "vault-sim COUNT [--first S] runs COUNT seeds and prints the failures and seeds per second (exit 1 when any fails); vault-sim --seed S reproduces one.")
    }

    @Argument(help: "how many seeds to run, from --first", valueName: "count")
    var count: UInt64?
    @Option(help: "the first seed of the run", valueName: "seed")
    var first: UInt64 = 1
    @Option(help: "run only this seed, with its report", valueName: "seed")
    var seed: UInt64?
    @Option(help: "operations per seed", valueName: "n")
    var steps: Int = 80
    @Flag(help: "trace every step (with --seed)")
    var verbose = false

    func validate() throws {
        if seed != nil && count != nil { throw ValidationError("give COUNT or --seed, not both") }
        if seed == nil && (count ?? 0) == 0 { throw ValidationError("give COUNT (seeds to run, 1 or more) or --seed S") }
        if steps < 1 { throw ValidationError("--steps takes 1 or more") }
        if verbose && seed == nil { throw ValidationError("--verbose traces one seed: give --seed S") }
    }

    func run() -> Int32 {
        if let seed {
            let sim = Simulation(seed: seed)
            sim.verbose = verbose
            if let failure = sim.run(steps: steps) { print(failure); return 1 }
            print("seed \(seed): ok")
            return 0
        }
        let count = count!
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
            return 1
        }
        return 0
    }
}

do {
    switch try CommandParser(SimProgram.self).parse(Array(CommandLine.arguments.dropFirst())) {
    case .help(let path): print(HelpGenerator.help(path), terminator: "")
    case .version(let v): print(v)
    case .run(let command, _): exit((command as! SimProgram).run())
    }
} catch {
    FileHandle.standardError.write(Data("\(error.description)\nUsage: \(HelpGenerator.usage(error.commandPath))\nSee 'vault-sim --help'.\n".utf8))
    exit(2)
}
