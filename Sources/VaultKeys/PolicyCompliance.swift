import Foundation

/// One item of `vault policy check`.
public struct ComplianceItem: Sendable, Encodable {
    public var item: String
    public var compliant: Bool
    public var detail: String
    /// The command that fixes it, when not compliant.
    public var fix: String?

    public init(item: String, compliant: Bool, detail: String, fix: String? = nil) {
        self.item = item; self.compliant = compliant; self.detail = detail; self.fix = fix
    }
}
