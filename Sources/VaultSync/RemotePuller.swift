import Foundation
import VaultAPI
import VaultCore
import VaultHTTP
import VaultPrimitives

/// The server as a pull reads it (`PullSource`): the change feed, the flat listing and folder
/// subtrees, every node opened by the codec (`RemoteCodec.openOrRefuse`) before the planner sees
/// it. A node whose own record is missing or does not authenticate is refused (handed on as such,
/// never as a node); any other node that contradicts itself is an integrity error: nothing of the
/// pull is applied.
final class RemotePuller: PullSource {
    let api: ServerAPI
    let codec: RemoteCodec
    let retry: RetryPolicy
    let say: (String) -> Void
    /// Changes per page of the feed, nodes per page of the listing (1000, or `VAULT_TEST_PULL_PAGE`).
    static var defaultPage: Int { TestHooks.pullPage ?? 1000 }
    let changesPage: Int
    let listingPage: Int
    /// The largest page accepted (a node's sealed name and records take about 900 bytes).
    static let pageBytes = 32 << 20

    /// The listing's next page, fetched and opened on another thread while the caller plans and
    /// applies this one (the server's time and this device's then overlap). At most one page ahead.
    private let prefetched = PageAhead()

    /// - Parameter pageSize: changes and nodes asked per page (nil: `defaultPage`).
    init(api: ServerAPI, codec: RemoteCodec, retry: RetryPolicy, pageSize: Int? = nil, say: @escaping (String) -> Void) {
        self.api = api; self.codec = codec; self.retry = retry; self.say = say
        changesPage = max(pageSize ?? Self.defaultPage, 1); listingPage = changesPage
    }

    private func get(_ path: String) throws -> HTTPResponse {
        try api.retrying(retry, say: say) { try api.json(.get, path, collectUpTo: Self.pageBytes) }
    }

    func startCursor() throws -> Int64 {
        finish()
        let r = try get("/v1/changes/start")
        guard r.status == 200 else { throw ServerAPI.statusError(r, doing: "read the change feed") }
        return try ServerAPI.decode(CursorResponse.self, r).cursor
    }

    func changes(after cursor: Int64) throws -> ChangesPage? {
        finish()
        var r = try get("/v1/changes?cursor=\(cursor)&limit=\(changesPage)")
        if r.status == 410 { return nil }
        guard r.status == 200 else { throw ServerAPI.statusError(r, doing: "read the change feed") }
        let list = try ServerAPI.decode(ChangeList.self, taking: &r)
        guard list.nextCursor >= cursor else {
            throw RemoteCodec.lie("the change feed went back from cursor \(cursor) to \(list.nextCursor)")
        }
        var files: [FileResource] = []
        files.reserveCapacity(list.changes.count)
        for c in list.changes {
            guard let f = c.file else { continue }
            guard f.id == c.fileId else { throw RemoteCodec.lie("a change of \(c.fileId) describes another node") }
            files.append(f)
        }
        let opened = try open(files)
        return ChangesPage(nodes: opened.nodes, nextCursor: list.nextCursor, hasMore: list.hasMore, refused: opened.refused)
    }

    func listing(after token: String?) throws -> ListingPage {
        let ahead = prefetched.take()
        let page: Result<ListingPage, Error>
        if let ahead, ahead.token == token { page = ahead.wait() } else { ahead?.discard(); page = Result { try fetchListing(after: token) } }
        let value = try page.get()
        if let next = value.next { prefetched.start(token: next) { [self] in try fetchListing(after: next) } }
        return value
    }

    /// Waits for a page being fetched ahead, if any: no request of this puller outlives the pull,
    /// and none runs beside another (the API's connection is used by one thread at a time).
    func finish() { prefetched.take()?.discard() }

    private func fetchListing(after token: String?) throws -> ListingPage {
        let q = "/v1/files?scope=all&pageSize=\(listingPage)" + (token.map { "&pageToken=\(Self.escape($0))" } ?? "")
        var r = try get(q)
        guard r.status == 200 else { throw ServerAPI.statusError(r, doing: "list the server's files") }
        let page = try ServerAPI.decode(FileList.self, taking: &r)
        guard !page.files.contains(where: \.trashed) else { throw RemoteCodec.lie("the listing of live files holds a trashed one") }
        let opened = try open(page.files)
        return ListingPage(nodes: opened.nodes, next: page.nextPageToken, refused: opened.refused)
    }

    /// Opens every entry of a page through the codec, on every core (a large pull's opening of
    /// names and records is most of its work), in the page's order: the nodes, and those refused
    /// (`RemoteCodec.openOrRefuse`); any other failure throws. A node the page names twice counts
    /// as its last entry says.
    func open(_ files: [FileResource]) throws -> (nodes: [RemoteNode], refused: [RefusedNode]) {
        let lanes = max(1, min(ProcessInfo.processInfo.activeProcessorCount, files.count / 64))
        let entries: [OpenedEntry]
        if lanes == 1 {
            entries = try files.map { try codec.openOrRefuse($0.sealed) }
        } else {
            let results = OpenedPage(count: files.count)
            let opener = codec
            DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                var i = lane
                while i < files.count {
                    results.set(i, Result { try opener.openOrRefuse(files[i].sealed) })
                    i += lanes
                }
            }
            entries = try results.values.map { try $0!.get() }
        }
        var nodes: [RemoteNode] = []
        nodes.reserveCapacity(entries.count)
        var refused: [RefusedNode] = []
        for e in entries {
            switch e {
            case .node(let n): nodes.append(n)
            case .refused(let r): refused.append(r)
            }
        }
        guard !refused.isEmpty else { return (nodes, []) }
        // A node both refused and opened in one page: its last entry decides.
        var last: [String: Int] = [:]
        for (i, f) in files.enumerated() { last[f.id] = i }
        var at: [String: Int] = [:]
        for (i, e) in entries.enumerated() { if case .refused(let r) = e { at[r.id] = i } }
        let refusedLast = refused.filter { at[$0.id] == last[$0.id] }
        let refusedIds = Set(refusedLast.map(\.id))
        return (nodes.filter { !refusedIds.contains($0.id) }, refusedLast)
    }

    func subtree(of remoteId: String) throws -> [RemoteNode] {
        finish()
        let r = try get("/v1/files/\(Self.escape(remoteId))")
        if r.status == 404 { return [] }
        guard r.status == 200 else { throw ServerAPI.statusError(r, doing: "read a folder") }
        // A node refused here is not followed (the feed or the listing that names it refuses it).
        guard case .node(let top) = try codec.openOrRefuse(try ServerAPI.decode(FileResource.self, r).sealed),
              !top.trashed, top.isFolder else { return [] }
        var out = [top]
        var queue = [top.id]
        while let folder = queue.popLast() {
            var token: String?
            repeat {
                let q = "/v1/files?parentId=\(Self.escape(folder))&pageSize=\(listingPage)" + (token.map { "&pageToken=\(Self.escape($0))" } ?? "")
                var page = try get(q)
                guard page.status == 200 else { throw ServerAPI.statusError(page, doing: "list a folder") }
                let list = try ServerAPI.decode(FileList.self, taking: &page)
                for f in list.files {
                    guard case .node(let n) = try codec.openOrRefuse(f.sealed) else { continue }
                    guard n.parentId == folder else { throw RemoteCodec.lie("a folder's listing holds a node of another folder") }
                    out.append(n)
                    if n.isFolder { queue.append(n.id) }
                }
                token = list.nextPageToken
            } while token != nil
        }
        return out
    }

    static func escape(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s }
}

/// The opened entries of a page, written by several threads at distinct indexes.
private final class OpenedPage: @unchecked Sendable {
    // SAFETY: each index is written by one thread only, and read after `concurrentPerform` returns.
    var values: [Result<OpenedEntry, Error>?]
    private let lock = NSLock()
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ r: Result<OpenedEntry, Error>) { lock.lock(); values[i] = r; lock.unlock() }
}

/// At most one listing page being fetched on another thread, and its result once there.
private final class PageAhead: @unchecked Sendable {
    // SAFETY: `current` is read and written only with `lock` held; a `Fetch`'s result is written
    // once before its semaphore is signalled and read only after waiting on it.
    final class Fetch: @unchecked Sendable {
        let token: String
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<ListingPage, Error>?
        init(token: String) { self.token = token }
        func complete(_ r: Result<ListingPage, Error>) { result = r; done.signal() }
        func wait() -> Result<ListingPage, Error> { done.wait(); return result! }
        /// Waits for it and drops what it fetched.
        func discard() { _ = wait() }
    }

    private var current: Fetch?
    private let lock = NSLock()

    func start(token: String, _ fetch: @escaping () throws -> ListingPage) {
        let f = Fetch(token: token)
        lock.lock(); let old = current; current = f; lock.unlock()
        old?.discard()
        nonisolated(unsafe) let work = fetch
        Thread.detachNewThread { f.complete(Result { try work() }) }
    }

    func take() -> Fetch? {
        lock.lock(); defer { lock.unlock() }
        let f = current
        current = nil
        return f
    }
}
