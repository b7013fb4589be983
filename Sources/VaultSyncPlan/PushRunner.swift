/// The highest node-record and content-record sequence numbers of a node (SECURITY.md "End to
/// end"), or the ones its next records take.
public struct RemoteSeqs: Sendable, Equatable {
    public var record: Int64
    public var content: Int64
    public init(record: Int64 = 0, content: Int64 = 0) { self.record = record; self.content = content }
}

/// How one outbox entry's push ended.
public enum PushOutcome: Sendable, Equatable {
    /// Applied on the server and recorded; the message, if any, is for people.
    case done(String?)
    /// Depends on an entry that waits (not a problem of its own).
    case waits(String)
    case conflict(String)
    case failed(String)
    /// A large upload on a metered network.
    case waitingForUnmetered(String)
    /// Paused or cancelled by the user while it ran.
    case held(String)
}

/// What sending one request came to: the server's answer, decoded for the rules, or an end the
/// transfer layer reached on its own (a hold, a metered network, unreadable content).
public enum PushSent: Sendable, Equatable {
    case answer(PushAnswer)
    case ended(PushOutcome)
}

/// Where a push reads and records the outbox: the vault's database on a device, memory in the
/// simulation. Every write is durable when it returns (a crash after it keeps it).
public protocol PushStore: AnyObject {
    /// The outbox, in order.
    func outbox() throws -> [OutboxEntry]
    /// The entry as it is now (another command may have paused or cancelled it since the outbox
    /// was read, an earlier entry's completion changed it); nil when it is gone.
    func current(_ entry: OutboxEntry) throws -> OutboxEntry?
    /// Whether local node `id` is in the tree (not removed).
    func hasNode(_ id: String) throws -> Bool
    /// The node an entry is about (alive, or tombstoned).
    func target(nodeId: String) throws -> OutboxTarget?
    /// The server id of a local folder (`root` for the root), nil while it is not on the server.
    func remoteFolderId(ofLocal id: String?) throws -> String?
    /// Whether any of `remoteIds` is a node in this device's tree.
    func holdsAny(remoteIds: [String]) throws -> Bool
    /// The change-feed cursor of the last pull applied (what a folder delete names).
    func cursor() throws -> Int64?
    /// How messages name the entry's node.
    func label(_ e: OutboxEntry, _ target: OutboxTarget?) throws -> String
    /// Stores the id chosen for the entry's new node before any request carries it; returns the
    /// id the entry holds.
    func clientId(for e: OutboxEntry, proposing id: String) throws -> String
    /// R5: a folder creation is about to be sent (a later 409 may then be its own answer).
    func markSent(_ e: OutboxEntry) throws
    /// Claims the sequence numbers the next records of server node `remoteId` (local node
    /// `nodeId`) take: above any this device sealed or saw for it, ever.
    func claimSeqs(remoteId: String, nodeId: String) throws -> RemoteSeqs
    /// Records that the server applied `e`: its completion, the sequence numbers the answer
    /// showed, and what the server now holds of the node when the answer said.
    func complete(_ e: OutboxEntry, _ completion: OutboxCompletion, seqs: RemoteSeqs?, base: RemoteBase?) throws
    /// Marks entry `e` (a conflict, a failure, or pending with the reason it waits).
    func mark(_ e: OutboxEntry, _ state: OutboxState, reason: String) throws
}

/// How a push reaches the server: the HTTP API on a device, the model server in the simulation.
public protocol PushTransport: AnyObject {
    /// Sends `request` for entry `e`, its records sealed with `seqs`.
    func send(_ request: PushRequest, for e: OutboxEntry, target: OutboxTarget?, label: String, seqs: RemoteSeqs) throws -> PushSent
    /// The server ids of everything under server folder `id` (live, any depth, not `id` itself).
    func subtree(of id: String) throws -> [String]
    /// A new server id for a node this device creates.
    func newId() -> String
    /// Settles a `discard_upload` entry (R1–R3: a file removed while its upload session was
    /// open) with the upload protocol; nil when the rules decide it.
    func discardUpload(_ e: OutboxEntry, target: OutboxTarget?, label: String) throws -> PushStep?
    /// Called after each entry (the simulation may crash a device there).
    func entryFinished() throws
}

/// One push: every replayable outbox entry in order, each through `PushRules` (what request it
/// becomes, what the answer means), with the dependency rules D1–D5 between them (docs/outbox.md,
/// "Replay"). `vault sync`, the agent's pass and the simulation all run this loop; only the store
/// and the transport differ. A thrown error (the server or network down after retries) stops
/// the push; what was recorded stays.
public struct PushRunner {
    /// Folder deletes wait for the pull that checks them (the first push of a sync).
    public var holdFolderDeletes: Bool
    public var deviceId: String
    /// Each event, for people, as it happens.
    public var say: (String) -> Void
    /// How messages write a byte count.
    public var sizeText: (UInt64) -> String

    public init(holdFolderDeletes: Bool, deviceId: String, say: @escaping (String) -> Void = { _ in },
                sizeText: @escaping (UInt64) -> String = { "\($0) B" }) {
        self.holdFolderDeletes = holdFolderDeletes; self.deviceId = deviceId; self.say = say; self.sizeText = sizeText
    }

    public func run(_ store: PushStore, _ transport: PushTransport) throws -> PushSummary {
        var summary = PushSummary()
        var waiting = PushWaiting()
        let cursor = try store.cursor()
        for listed in try store.outbox() {
            // Held meanwhile from another command (`vault transfers pause|cancel`), or gone?
            guard let entry = listed.state.isReplayable ? try store.current(listed) : listed else { continue }
            let removed = try !store.hasNode(entry.nodeId)
            let state = entry.state
            guard state.isReplayable else {
                if state.isHeld { summary.held += 1 } else { summary.conflicts += 1 }
                waiting.add(entry, removed: removed)
                continue
            }
            if waiting.nodes.contains(entry.nodeId) {   // D1
                summary.skipped += 1
                waiting.add(entry, removed: removed)
                continue
            }
            let outcome = try push(entry, waiting, cursor: cursor, store, transport)
            if case .done = outcome {} else { waiting.add(entry, removed: removed) }
            switch outcome {
            case .done(let message):
                summary.done += 1
                if let message { note(message, &summary) }
            case .waits:
                summary.skipped += 1
            case .waitingForUnmetered(let why):
                summary.waitingForUnmetered += 1
                note(why, &summary)
            case .conflict(let why):
                try store.mark(entry, .conflict, reason: why)
                summary.conflicts += 1
                note("conflict: \(why)", &summary)
            case .failed(let why):
                try store.mark(entry, .failed, reason: why)
                summary.failed += 1
                note("failed: \(why)", &summary)
            case .held(let why):
                summary.held += 1
                note(why, &summary)
            }
            try transport.entryFinished()
        }
        return summary
    }

    private func note(_ message: String, _ summary: inout PushSummary) {
        summary.messages.append(message)
        say(message)
    }

    /// One entry: the rules' steps until it ends. A step is at most an id, a request, its
    /// answer, and one more request (a replaced move's delete).
    func push(_ entry: OutboxEntry, _ waiting: PushWaiting, cursor: Int64?, _ store: PushStore, _ transport: PushTransport) throws -> PushOutcome {
        var e = entry
        let target = try store.target(nodeId: e.nodeId)
        let label = try store.label(e, target)
        if e.op == .discardUpload, let step = try transport.discardUpload(e, target: target, label: label) {
            return try finish(step, e, answered: nil, store)
        }
        let rules = PushRules(target: target, remoteFolderId: { try store.remoteFolderId(ofLocal: $0) }, waiting: waiting,
                              holdFolderDeletes: holdFolderDeletes, deviceId: deviceId, newId: transport.newId,
                              subtreeHoldsLocal: { try store.holdsAny(remoteIds: try transport.subtree(of: $0)) },
                              label: label, cursor: cursor)
        var step = try rules.decide(e)
        var answered: RemoteNode?
        for _ in 0..<6 {
            switch step {
            case .assignId(let id):
                // On disk before the first request that carries it.
                e.payload.clientId = try store.clientId(for: e, proposing: id)
                step = try rules.decide(e)
            case .send(let request):
                if case .createFolder = request { try store.markSent(e) }
                let seqs = request.sealsRecords ? try store.claimSeqs(remoteId: request.nodeId, nodeId: e.nodeId) : RemoteSeqs()
                switch try transport.send(request, for: e, target: target, label: label, seqs: seqs) {
                case .ended(let outcome): return outcome
                case .answer(let answer):
                    switch answer {
                    case .ok(let n), .stale(let n), .idTaken(let n?): answered = n
                    default: break
                    }
                    step = try rules.interpret(answer, to: request, for: e)
                    if case .waits(let why) = step { try store.mark(e, .pending, reason: why) }   // D5: said where people look
                }
            default:
                return try finish(step, e, answered: answered, store)
            }
        }
        return .conflict("the server's answers about \(label) do not settle")
    }

    /// The end of an entry's steps: a completion recorded (with the sequence numbers the last
    /// answer showed), or how it waits or failed.
    private func finish(_ step: PushStep, _ e: OutboxEntry, answered: RemoteNode?, _ store: PushStore) throws -> PushOutcome {
        switch step {
        case let .done(completion, base, message):
            let seqs = answered.map { RemoteSeqs(record: $0.record?.seq ?? 0, content: $0.content?.seq ?? 0) }
            try store.complete(e, completion, seqs: seqs, base: base)
            return .done(message.map { withSize($0, completion, e) })
        case .waits(let why): return .waits(why)
        case .conflict(let why): return .conflict(why)
        case .failed(let why): return .failed(why)
        case .assignId, .send: return .conflict("the push of \(e.nodeId) did not settle")
        }
    }

    /// An upload's message says how much it sent.
    func withSize(_ message: String, _ c: OutboxCompletion, _ e: OutboxEntry) -> String {
        guard case .uploaded = c, let size = e.payload.size else { return message }
        return "\(message) (\(sizeText(size)))"
    }
}

extension PushRequest {
    /// The server id of the node the request is about.
    public var nodeId: String {
        switch self {
        case let .createFolder(id, _, _), let .createFile(id, _, _, _), let .newRevision(id, _, _), let .move(id, _, _, _), let .delete(id, _, _):
            return id
        }
    }

    /// Whether the request carries a node or content record (a delete carries none).
    public var sealsRecords: Bool {
        if case .delete = self { return false }
        return true
    }
}
