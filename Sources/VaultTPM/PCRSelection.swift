import Foundation

/// A set of PCRs of the SHA-256 bank (0…23), as `--pcrs 7,16` names it.
public struct PCRSelection: Equatable, Sendable, CustomStringConvertible {
    /// Bit i set: PCR i is in the set.
    public let mask: UInt32

    public static let none = PCRSelection(uncheckedMask: 0)

    public init?(mask: UInt32) {
        guard mask <= 0xFF_FFFF else { return nil }
        self.mask = mask
    }

    private init(uncheckedMask: UInt32) { mask = uncheckedMask }

    /// Parses a comma-separated list of PCR indexes ("7", "7,16"); nil when an entry is not 0…23.
    /// The empty list is `.none`.
    public init?(list: String) {
        guard !list.isEmpty else { mask = 0; return }
        var m: UInt32 = 0
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            let t = part.trimmingCharacters(in: .whitespaces)
            guard let i = UInt32(t), i < 24 else { return nil }
            m |= 1 << i
        }
        mask = m
    }

    public var indexes: [Int] { (0..<24).filter { mask & (1 << UInt32($0)) != 0 } }
    public var isEmpty: Bool { mask == 0 }
    public var description: String { indexes.map(String.init).joined(separator: ",") }
}
