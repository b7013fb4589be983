import Foundation
import VaultCore

/// One sync pass, put together in this one place for every caller (`vault sync`, `vault sync
/// --pinned-only`, `vault transfers resume` and the agent's worker): the metered rules (large
/// transfers held on a metered network unless allowed, never when the policy forbids it), then
/// the push, the pull and the pinned downloads the kind of pass asks for.
public enum SyncPass {
    public enum Kind: Sendable {
        /// `vault sync`: push (folder deletes held), pull, push what the pull produced, pinned downloads.
        case twoWay
        /// `vault transfers resume`: push, then pinned downloads; no pull.
        case pushAndPinned
        /// `vault sync --pinned-only`: pinned downloads only.
        case pinnedOnly
    }

    /// What a pass did.
    public struct Result: Sendable {
        /// The push's counts (with `downloaded` and `waitingForUnmetered` filled in).
        public var push = PushSummary()
        /// The pull's (nil when the pass does not pull).
        public var pull: PullSummary?
        /// Where the metered state came from.
        public var meteredSource = ""
        /// The policy requires unmetered networks for large transfers.
        public var unmeteredOnly = false
    }

    /// The kind of pass `request` asks for, when it is not `transfers resume`.
    public static func kind(of request: SyncRequest) -> Kind { request.pinnedOnly ? .pinnedOnly : .twoWay }

    /// Runs one pass of `kind` on `client`'s vault.
    public static func run(_ client: SyncClient, _ request: SyncRequest, kind: Kind, policy: EffectivePolicy,
                           environment: [String: String]) throws -> Result {
        let vault = client.vault
        let (hold, cost) = try NetworkCost.largeTransferHold(vault: vault, policy: policy, allowMetered: request.allowMetered,
                                                             environment: environment)
        var r = Result(meteredSource: cost.source, unmeteredOnly: policy.largeTransfersUnmeteredOnly.value == true)
        let concurrency = request.concurrency ?? SyncClient.defaultConcurrency
        switch kind {
        case .twoWay:
            var o = SyncOptions()
            o.concurrency = concurrency
            o.holdLargeFrom = hold
            o.maxDelete = request.maxDelete ?? o.maxDelete
            o.force = request.force
            o.conflictPolicy = try SyncClient.conflictPolicy(vault: vault, policy: policy)
            let report = try client.sync(o)
            r.push = report.push
            r.push.waitingForUnmetered = report.waitingForUnmetered
            r.pull = report.pull
        case .pushAndPinned, .pinnedOnly:
            if kind == .pushAndPinned { r.push = try client.push(concurrency: concurrency, holdLargeFrom: hold) }
            let pinned = try client.downloadPinned(holdLargeFrom: hold)
            r.push.downloaded = pinned.downloaded
            r.push.waitingForUnmetered += pinned.waiting
        }
        return r
    }
}
