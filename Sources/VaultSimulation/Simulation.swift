import VaultSyncPlan
import VaultPrimitives

/// A deterministic multi-device simulation of two-way sync (in the spirit of Dropbox's Nucleus
/// testing, CanopyCheck and Trinity): 2–4 devices run seeded random user operations (put, edit,
/// mkdir, mv, rm, rm -r, pin, unpin, evict), go offline and online, and sync through a network that
/// drops, loses, delays, reorders and duplicates requests and a device that crashes between any two
/// steps; every device runs the real planner (`SyncPlanner`, `PullRunner`) and the real push
/// decisions (`PushRules`) against an in-memory model of the server. After quiescence (faults
/// off, everyone online, syncing until nothing changes) it checks docs/sync.md's invariants:
///
/// 1. every device's tree (paths, types, content SHA-256) equals the server's live tree;
/// 2. every content a device wrote and synced is reachable (a head, a conflict copy or a
///    revision of a live file), unless a device deleted it knowing it;
/// 3. no node has an unknown parent, none is inside itself, and no outbox holds anything;
/// 4. syncing again changes nothing, and no cursor ever went back.
///
/// A seed gives the same run everywhere; a failure says how to replay it.
public final class Simulation {
    public let seed: UInt64
    var rng: SimRandom
    let server: SimServer
    var devices: [SimDevice] = []
    let network: SimNetwork
    /// Content tokens that were some device's pending content when a sync began.
    var committed = Set<UInt64>()
    /// Content tokens a device deleted knowing them.
    var exempt = Set<UInt64>()
    var nextToken: UInt64 = 1
    var messages = 0
    var failure: String?
    let policies: [ConflictPolicy]
    /// What happened, for a failure's report (most recent last).
    var log: [String] = []

    public init(seed: UInt64) {
        self.seed = seed
        var r = SimRandom(seed: seed)
        let deviceCount = 2 + Int(r.next() % 3)
        server = SimServer(keepChanges: 8 + Int(r.next() % 40), pageSize: 2 + Int(r.next() % 6))
        network = SimNetwork(faultRate: r.chance(0.8) ? Double(r.next() % 8) / 100 : 0)
        policies = (0..<deviceCount).map { _ in r.chance(0.7) ? .keepBoth : .lastWriterWins }
        rng = r
        network.server = server
        network.rng = SimRandom(seed: seed ^ 0x5eed)
        devices = (0..<deviceCount).map { SimDevice(index: $0) }
    }

    /// A simulation for a scripted scenario: `deviceCount` devices keeping both sides of a
    /// conflict, a network without faults.
    init(deviceCount: Int) {
        seed = 0
        rng = SimRandom(seed: 0)
        server = SimServer(keepChanges: 1000, pageSize: 100)
        network = SimNetwork(faultRate: 0)
        policies = Array(repeating: .keepBoth, count: deviceCount)
        network.server = server
        devices = (0..<deviceCount).map { SimDevice(index: $0) }
    }

    func policy(_ d: SimDevice) -> ConflictPolicy { policies[d.index] }

    /// Every push request and plan action, when verbose.
    var traceLog: [String] = []
    func trace(_ s: @autoclosure () -> String) { if verbose { traceLog.append(s()) } }

    func fail(_ message: String) { if failure == nil { failure = message } }

    /// Runs `steps` random steps, then quiescence and the checks. Returns nil, or what failed.
    public func run(steps: Int = 80) -> String? {
        for step in 0..<steps {
            network.tick()
            let d = devices[Int(rng.next() % UInt64(devices.count))]
            let roll = rng.next() % 100
            do {
                if roll < 62 { try userOperation(d) }
                else if roll < 88 { log.append("\(d.name): sync"); try d.sync(self) }
                else if roll < 95 { d.online.toggle(); log.append("\(d.name): \(d.online ? "online" : "offline")") }
                else { network.faultsOn.toggle() }
            } catch is SimFault {
                log.append("\(d.name): fault")
            } catch {
                fail("step \(step), \(d.name): \(error)")
            }
            if failure != nil { return report() }
        }
        quiesce()
        if failure == nil { check() }
        return failure == nil ? nil : report()
    }

    /// Print every step and, on a failure, every tree.
    public var verbose = false

    func report() -> String {
        var s = "seed \(seed): \(failure ?? "")\n  last steps: " + log.suffix(verbose ? log.count : 12).joined(separator: "; ")
            + "\n  replay: scripts/sim.sh --seed \(seed)"
        if verbose { s += "\n" + traceLog.joined(separator: "\n") + "\n" + dump() }
        return s
    }

    /// Every device's nodes and outbox, and the server's files.
    public func dump() -> String {
        var s = "server (latest \(server.latest), pruned \(server.prunedThrough)):\n"
        for f in server.files.values.sorted(by: { $0.id < $1.id }) {
            s += "  \(f.id) parent=\(f.parent ?? "-") name=\(f.name) v\(f.version)\(f.trashed ? " TRASHED" : "")\(server.isLive(f.id) ? "" : " (not live)") \(f.content.map { "\($0.sha256) blob \($0.blob)" } ?? "")\n"
        }
        for d in devices {
            s += "\(d.name) (cursor \(d.cursor ?? -1)):\n"
            for (p, n) in d.all() {
                s += "  \(p) id=\(n.id) remote=\(n.remoteId ?? "-") v\(n.version) \(n.contentState.rawValue) \(n.sha256 ?? "")\n"
            }
            for e in d.state.outbox { s += "  outbox \(e.seq) \(e.op.rawValue) node=\(e.nodeId) \(e.payload.name ?? "") parent=\(e.payload.parentId ?? "-") remote=\(e.payload.remoteId ?? "-") \(e.state.rawValue) \(e.lastError ?? "")\n" }
            for t in d.state.tombstones.values { s += "  tombstone \(t.nodeId) remote=\(t.remoteId ?? "-") v\(t.version)\n" }
        }
        return s
    }

    // MARK: - User operations

    static let folderNames = ["A", "B", "C", "sub"]
    static let fileNames = ["e.dat", "f.txt", "g", "h.bin"]

    func pick<T>(_ list: [T]) -> T? { list.isEmpty ? nil : list[Int(rng.next() % UInt64(list.count))] }

    func userOperation(_ d: SimDevice) throws {
        let all = d.all()
        let folders = [(String, Node)]([("", try d.state.node(id: Node.rootId)!)]) + all.filter { $0.1.isFolder }
        let files = all.filter { !$0.1.isFolder }
        switch rng.next() % 11 {
        case 0, 1:
            guard let (p, f) = pick(folders), let name = pick(Self.folderNames), d.mkdir(in: f, name: name) else { return }
            log.append("\(d.name): mkdir \(p)/\(name)")
        case 2, 3:
            guard let (p, f) = pick(folders), let name = pick(Self.fileNames) else { return }
            let t = token()
            if d.put(in: f, name: name, token: t) { log.append("\(d.name): put \(p)/\(name) #\(t)") }
        case 4, 5:
            guard let (p, f) = pick(files) else { return }
            let t = token()
            if let old = d.replace(f, token: t) { exempt.insert(old) }
            log.append("\(d.name): edit \(p) #\(t)")
        case 6, 7:
            guard let (p, x) = pick(all), let (q, into) = pick(folders) else { return }
            let name = rng.chance(0.5) ? x.name : (pick(x.isFolder ? Self.folderNames : Self.fileNames) ?? x.name)
            if d.move(x, into: into, name: name) { log.append("\(d.name): mv \(p) \(q)/\(name)") }
        case 8:
            guard let (p, x) = pick(all) else { return }
            exempt.formUnion(try d.remove(x, server: server))
            log.append("\(d.name): rm -r \(p)")
        case 9:
            guard let (p, x) = pick(all) else { return }
            let pin = rng.chance(0.6)
            try d.setPinned(x, pin)
            log.append("\(d.name): \(pin ? "pin" : "unpin") \(p)")
        default:
            guard let (p, x) = pick(files) else { return }
            d.evict(x)
            log.append("\(d.name): evict \(p)")
        }
    }

    func token() -> UInt64 { defer { nextToken += 1 }; return nextToken }

    // MARK: - Quiescence and the checks

    func quiesce() {
        network.faultsOn = false
        network.flush()
        for d in devices { d.online = true }
        for round in 0..<12 {
            let before = fingerprint()
            for d in devices {
                do { try d.sync(self) } catch { fail("quiescence round \(round), \(d.name): \(error)"); return }
            }
            if fingerprint() == before && round > 0 { return }
        }
        fail("no quiescence after 12 rounds of syncs")
    }

    func fingerprint() -> String {
        "\(server.latest)|" + devices.map { "\($0.cursor ?? -1):\($0.state.outbox.count):\($0.tree().count)" }.joined(separator: ",")
    }

    func check() {
        let truth = server.tree()
        for d in devices {
            let t = d.tree()
            if t != truth {
                let diff = Set(t.keys).symmetricDifference(truth.keys).sorted().prefix(4)
                let differing = t.keys.filter { truth[$0] != nil && truth[$0] != t[$0] }.sorted().prefix(4)
                fail("\(d.name)'s tree differs from the server's: only on one side \(Array(diff)), different \(Array(differing)) (device \(t.count) entries, server \(truth.count))")
                return
            }
            if let e = d.state.outbox.first { fail("\(d.name)'s outbox still holds \(e.op.rawValue) of \(e.nodeId) (\(e.state.rawValue): \(e.lastError ?? ""))"); return }
            for (path, n) in d.all() {
                if n.contentState == .local, let b = n.localPath, d.blobs[b].map(SimContent.sha) != n.sha256 {
                    fail("\(d.name): \(path) is LOCAL with content that is not its own"); return
                }
                if let p = n.parentId, (try? d.state.node(id: p)) ?? nil == nil { fail("\(d.name): \(path) has an unknown parent"); return }
            }
        }
        let reachable = server.reachable()
        let lost = committed.subtracting(exempt).subtracting(reachable)
        if !lost.isEmpty { fail("content written and synced is not reachable on the server: \(lost.sorted().prefix(5).map { "#\($0)" })") }
        // Syncing again changes nothing.
        let before = fingerprint(), trees = devices.map { $0.tree() }
        for d in devices { try? d.sync(self) }
        if fingerprint() != before || devices.map({ $0.tree() }) != trees { fail("a sync after quiescence changed something") }
    }
}

/// SplitMix64 (VaultPrimitives): the same seed gives the same run everywhere.
struct SimRandom {
    private var g: SplitMix64
    init(seed: UInt64) { g = SplitMix64(seed: seed) }
    mutating func next() -> UInt64 { g.next() }
    mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }
}

/// The network between devices and the server: with faults on, a request may be dropped (never
/// applied), its answer lost (applied, the device never hears), delayed (applied some steps
/// later, after other requests: a reordering) or duplicated (applied twice, the second answer
/// heard); a read may fail; a device may crash between two steps.
final class SimNetwork {
    var server: SimServer!
    var rng = SimRandom(seed: 0)
    let faultRate: Double
    var faultsOn = true
    var now = 0
    var inFlight: [(due: Int, device: SimDevice, request: PushRequest, seqs: RemoteSeqs)] = []

    init(faultRate: Double) { self.faultRate = faultRate }

    var faulty: Bool { faultsOn && faultRate > 0 && rng.chance(faultRate) }

    func send(_ request: PushRequest, seqs: RemoteSeqs, from d: SimDevice) throws -> PushAnswer {
        let apply = { self.server.handle(request, device: d.deviceId, seqs: seqs, token: { d.blobs[$0] ?? 0 }) }
        guard faulty else { return apply() }
        switch rng.next() % 4 {
        case 0: throw SimFault()
        case 1: _ = apply(); throw SimFault()
        case 2: inFlight.append((now + 1 + Int(rng.next() % 6), d, request, seqs)); throw SimFault()
        default: _ = apply(); return apply()
        }
    }

    func read() throws { if faulty { throw SimFault() } }

    func maybeCrash() throws { if faulty { throw SimFault() } }

    /// One step of time: delayed requests that are due reach the server.
    func tick() {
        now += 1
        let due = inFlight.filter { $0.due <= now }
        inFlight.removeAll { $0.due <= now }
        for (_, d, r, seqs) in due { _ = server.handle(r, device: d.deviceId, seqs: seqs, token: { d.blobs[$0] ?? 0 }) }
    }

    /// Everything still in flight arrives.
    func flush() {
        for (_, d, r, seqs) in inFlight { _ = server.handle(r, device: d.deviceId, seqs: seqs, token: { d.blobs[$0] ?? 0 }) }
        inFlight = []
    }
}
