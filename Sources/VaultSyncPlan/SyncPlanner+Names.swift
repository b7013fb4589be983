/// Placing a node in a folder: name collisions, conflict names and cycles (docs/sync.md, "Name
/// collisions").
extension PlanRun {
    /// Puts `x` in folder `p` as `name`, settling a collision with another node of that name.
    func place(_ x: inout Node, parent p: String, name: String, remote r: RemoteNode?) throws {
        if x.isFolder, try state.isWithin(p, x.id) { try breakCycle(x, into: p) }
        x.parentId = p
        x.name = name
        if let other = try state.child(of: p, named: name), other.id != x.id {
            try collide(other, with: &x)
        }
        detached[x.id] = nil
        state.put(x)
    }

    /// `x` arrives (from the server) where `other` already is.
    func collide(_ other: Node, with x: inout Node) throws {
        let p = x.parentId ?? Node.rootId
        let placing = try state.entries(of: other.id).last { try state.places($0) && $0.payload.parentId == p && $0.payload.name == other.name }
        if other.remoteId == nil || placing != nil {
            // New here, or moved here by a pending change: the remote node wins the name, and the
            // local one's pending entries follow its new name.
            var o = other
            o.name = try conflictName(other.name, in: p, taken: x.name)
            if var e = placing { e.payload.name = o.name; state.update(e) }
            state.put(o)
            try say(.nameCollision, o, "\(other.name) arrived from another device where this device had put \(other.name): this device's is now \(o.name)")
            return
        }
        // Two nodes on the server with one name (across key epochs, or a faulty server): the lower
        // id keeps it; this device renames the other, here and on the server.
        var loser = (x.remoteId ?? "") < (other.remoteId ?? "") ? other : x
        let newName = try conflictName(loser.name, in: p, taken: x.name)
        loser.name = newName
        state.append(.move, nodeId: loser.id, payload: OutboxPayload(name: newName, parentId: p, remoteId: loser.remoteId),
                     baseVersion: loser.version, requestId: settings.newId())
        loser.pendingOp = loser.pendingOp ?? .move
        if loser.id == x.id { x = loser } else { state.put(loser) }
        try say(.duplicateName, loser, "the server holds two items named \(other.name) in one folder: this one is renamed \(newName)")
    }

    /// A name not used in folder `p` (by a node other than `id`): `name`, or a conflict name.
    func freeName(_ name: String, in p: String, for id: String) throws -> String {
        if let other = try state.child(of: p, named: name), other.id != id { return try conflictName(name, in: p) }
        return name
    }

    /// `stem (conflict from DEVICE YYYY-MM-DD).ext`, numbered when taken, within 255 bytes.
    func conflictName(_ name: String, in p: String, taken: String? = nil) throws -> String {
        // Names held on the server in that folder (as last seen) are not free either.
        let rp = p == Node.rootId ? Node.rootId : try state.node(id: p)?.remoteId
        let onServer = Set(try rp.map { try state.baseChildren(of: $0).map(\.name) } ?? [])
        var n = 1
        while true {
            let candidate = ConflictName.make(name, device: settings.deviceName, date: settings.today, number: n)
            if candidate != taken, !onServer.contains(candidate), try state.child(of: p, named: candidate) == nil { return candidate }
            n += 1
        }
    }

    /// Moving folder `x` into `p` would make a cycle here: pending local moves put `p` (or a
    /// folder above it) inside `x`. The server's placement wins: those local moves are dropped
    /// and the nodes go back where the server has them.
    func breakCycle(_ x: Node, into p: String) throws {
        var rounds = 0
        while try state.isWithin(p, x.id) {
            rounds += 1
            guard rounds < 50, let y = try firstMover(from: p, upTo: x.id) else {
                if rounds < 50, mode == .listing, let z = try firstUnlisted(from: p, upTo: x.id) {
                    // The listing shows that folder's place in a later page: until then, the top.
                    var n = z
                    n.parentId = Node.rootId
                    n.name = try freeName(z.name, in: Node.rootId, for: z.id)
                    state.put(n)
                    continue
                }
                throw SyncPlanError("the server's tree would put a folder inside itself")
            }
            try revertMoves(y, depth: 0)
        }
    }

    /// The first node on the way from `start` up to (not including) `top` that this listing page
    /// does not show (its place here is older than the server's).
    func firstUnlisted(from start: String, upTo top: String) throws -> Node? {
        var cur = try state.node(id: start)
        var steps = 0
        while let c = cur, c.id != top, steps < 10_000 {
            if let rid = c.remoteId, fetched[rid] == nil { return c }
            cur = try c.parentId.flatMap { try state.node(id: $0) }
            steps += 1
        }
        return nil
    }

    /// The first node on the way from `start` up to (not including) `top` that is there by a
    /// pending move of this device.
    func firstMover(from start: String, upTo top: String) throws -> Node? {
        var cur = try state.node(id: start)
        var steps = 0
        while let c = cur, c.id != top, steps < 10_000 {
            if c.remoteId != nil, state.entries(of: c.id).contains(where: { $0.op == .move }) { return c }
            cur = try c.parentId.flatMap { try state.node(id: $0) }
            steps += 1
        }
        return nil
    }

    /// Drops node `y`'s pending moves and puts it back where the server has it (first undoing
    /// the moves that put that place inside `y`).
    func revertMoves(_ y: Node, depth: Int) throws {
        guard depth < 50, let rid = y.remoteId else { throw SyncPlanError("the server's tree would put a folder inside itself") }
        let moves = state.entries(of: y.id).filter { $0.op == .move }
        // Where the server has it: as this fetch shows it, else as last seen, else (a folder above
        // it was trashed) at the top, where its own next sync will settle it.
        let b = try state.base(remoteId: rid)
        let place = fetched[rid].map { (parent: $0.parentId, name: $0.name) } ?? b.map { (parent: $0.parentId, name: $0.name) }
            ?? (parent: Node.rootId, name: y.name)
        let parent = try place.parent.flatMap { try state.node(remoteId: $0) }?.id ?? Node.rootId
        // Back into a folder this device removed (its delete waits): this device moved it out to
        // keep it, so it goes to the top, here and (in the place of its first move, before that
        // delete) on the server.
        var keepAtTop: OutboxEntry?
        if let first = moves.first, let p = place.parent, p != Node.rootId, try state.node(remoteId: p) == nil,
           try deletedAncestor(startingAt: p) != nil {
            keepAtTop = first
        }
        for e in moves where e.seq != keepAtTop?.seq { state.drop(seq: e.seq) }
        while try state.isWithin(parent, y.id) {
            guard let z = try firstMover(from: parent, upTo: y.id) else {
                throw SyncPlanError("the server's tree would put a folder inside itself")
            }
            try revertMoves(z, depth: depth + 1)
        }
        var n = try state.node(id: y.id) ?? y
        n.parentId = parent
        n.name = place.name
        if state.entries(of: n.id).isEmpty { n.pendingOp = nil }
        if let other = try state.child(of: parent, named: place.name), other.id != n.id { try collide(other, with: &n) }
        if var e = keepAtTop {
            e.payload.parentId = Node.rootId; e.payload.name = n.name
            e.baseVersion = fetched[rid]?.version ?? b?.version ?? e.baseVersion
            e.state = .pending; e.lastError = nil; e.sentAt = nil
            state.update(e)
            n.pendingOp = n.pendingOp ?? .move
        }
        state.put(n)
        try say(.moveMove, n, "moved here into a folder that another device moved into it: the other device's placement wins")
    }
}

/// Names of conflict copies: `stem (conflict from DEVICE YYYY-MM-DD).ext`.
public enum ConflictName {
    /// The name for `name` (numbered from 2 on), at most 255 bytes of UTF-8, never with `/`, NUL
    /// or control characters from the device name.
    public static func make(_ name: String, device: String, date: String, number: Int = 1) -> String {
        var stem = name, ext = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex, name.index(after: dot) != name.endIndex {
            stem = String(name[..<dot]); ext = String(name[dot...])
        }
        let cleanDevice = String(device.unicodeScalars.map { $0 == "/" || $0.value < 32 || $0.value == 127 ? "-" : Character($0) })
        let tag = " (conflict from \(cleanDevice.prefix(40)) \(date)\(number > 1 ? " \(number)" : ""))"
        while stem.utf8.count + tag.utf8.count + ext.utf8.count > 255 && !stem.isEmpty { stem.removeLast() }
        if stem.utf8.count + tag.utf8.count + ext.utf8.count > 255 { ext = "" }
        return stem + tag + ext
    }

    /// Whether `name` is one `make` gives: `… (conflict from DEVICE YYYY-MM-DD[ N])`, then nothing
    /// or an extension (a dot and no other). Names only: a file a user named so counts too.
    public static func isCopy(_ name: String) -> Bool {
        var candidates = [Substring(name)]
        if let dot = name.lastIndex(of: ".") { candidates.append(name[..<dot]) }
        return candidates.contains { (stem: Substring) -> Bool in
            let marker = " (conflict from "
            guard stem.hasSuffix(")"), let open = stem.indices.reversed().first(where: { stem[$0...].hasPrefix(marker) }) else { return false }
            // DEVICE, a space, the date, and maybe a space and a number.
            let inside = stem.index(open, offsetBy: marker.count)
            guard inside < stem.endIndex else { return false }
            var words = stem[inside..<stem.index(before: stem.endIndex)].split(separator: " ", omittingEmptySubsequences: false)
            if words.count >= 3, let last = words.last, !last.isEmpty, last.allSatisfy(\.isASCIIDigit) { words.removeLast() }
            guard words.count >= 2, let date = words.last else { return false }
            let digits = date.split(separator: "-", omittingEmptySubsequences: false)
            return digits.map(\.count) == [4, 2, 2] && digits.allSatisfy { $0.allSatisfy(\.isASCIIDigit) }
        }
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
