import Foundation
internal import CGioShims
import VaultCore

/// Whether the network is metered, and so whether large transfers should wait (BRIEF §7).
/// Sources, first that answers: `VAULT_METERED=1|0`, the vault's setting (`vault transfers
/// --metered yes|no|auto`), NetworkManager's `Metered` property over the system D-Bus; otherwise
/// unmetered.
public struct NetworkCost: Sendable {
    public var metered: Bool
    /// Where the answer came from, for messages.
    public var source: String

    /// Transfers at least this large wait for an unmetered network (unless allowed).
    public static let defaultLargeTransferBytes: UInt64 = 50 << 20

    public static func current(vault: Vault, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> NetworkCost {
        if let v = environment["VAULT_METERED"], v == "1" || v == "0" {
            return NetworkCost(metered: v == "1", source: "VAULT_METERED")
        }
        if let s = try vault.setting(.metered), s != "auto" {
            return NetworkCost(metered: s == "yes", source: "the vault's setting")
        }
        var value: UInt32 = 0
        var err: UnsafeMutablePointer<CChar>?
        if CGioShims_nm_metered(&value, &err) == 0 {
            return NetworkCost(metered: value == 1 || value == 3, source: "NetworkManager")
        }
        CGioShims_free(err)
        return NetworkCost(metered: false, source: "no NetworkManager (assumed unmetered)")
    }

    /// The size from which a transfer counts as large.
    public static func largeTransferBytes(vault: Vault) throws -> UInt64 {
        try vault.setting(.largeTransferBytes).flatMap(UInt64.init) ?? defaultLargeTransferBytes
    }

    /// Stores `yes`, `no` or `auto` (ask NetworkManager).
    public static func setMetered(_ value: String, vault: Vault) throws {
        try vault.setSetting(.metered, value)
    }

    public static func setLargeTransferBytes(_ bytes: UInt64, vault: Vault) throws {
        try vault.setSetting(.largeTransferBytes, String(bytes))
    }
}
