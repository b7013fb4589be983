import Foundation
import VaultCore

extension NetworkCost {
    /// The metered-network rule of a sync, in one place for `vault sync` and `vault agent`: on a
    /// metered network transfers of at least the large-transfer size wait (`holdLargeFrom`),
    /// unless `allowMetered`, which the policy's `largeTransfersUnmeteredOnly` refuses.
    /// - Returns: the size from which transfers wait now (nil: none wait), and the network cost
    ///   it was decided on.
    public static func largeTransferHold(vault: Vault, policy: EffectivePolicy, allowMetered: Bool,
                                         environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (holdLargeFrom: UInt64?, cost: NetworkCost) {
        if allowMetered && policy.largeTransfersUnmeteredOnly.value == true {
            throw VaultError(.policy, "the policy allows large transfers only on unmetered networks", hint: "connect to an unmetered network")
        }
        let cost = try current(vault: vault, environment: environment)
        return (cost.metered && !allowMetered ? try largeTransferBytes(vault: vault) : nil, cost)
    }
}
