import Foundation
/// A type an option or argument value can be read as. `expectation` completes the sentence
/// "'x' is not …" in the error for a value that does not parse.
public protocol ExpressibleByArgument {
    /// The value `argument` stands for, or nil when it is not one.
    init?(argument: String)
    /// The placeholder in usage and help (`<n>`, `<size>`), unless the declaration names one.
    static var defaultValueName: String { get }
    /// What a valid value looks like, for errors: "a whole number", "a size like 10G".
    static var expectation: String { get }
    /// The values a shell may complete (an enumeration's cases); empty for open-ended types.
    static var allValueStrings: [String] { get }
    /// How shells complete a value of this type (unless the declaration says otherwise).
    static var defaultCompletion: CompletionKind { get }
}

extension ExpressibleByArgument {
    public static var defaultValueName: String { "value" }
    public static var allValueStrings: [String] { [] }
    public static var defaultCompletion: CompletionKind {
        allValueStrings.isEmpty ? .none : .list(allValueStrings)
    }
}

/// Enumerations of fixed words (`--kdf argon2id|pbkdf2`) get parsing and completion for free.
extension ExpressibleByArgument where Self: CaseIterable & RawRepresentable, RawValue == String {
    public init?(argument: String) { self.init(rawValue: argument) }
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    public static var expectation: String {
        let all = allValueStrings
        return all.count <= 1 ? "\(all.first ?? "a value")" : "one of " + all.dropLast().joined(separator: ", ") + " or " + all.last!
    }
}

extension String: ExpressibleByArgument {
    public init?(argument: String) { self = argument }
    public static var expectation: String { "text" }
}

extension Int: ExpressibleByArgument {
    public init?(argument: String) {
        guard argument.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2d }), let v = Int(argument) else { return nil }
        self = v
    }
    public static var defaultValueName: String { "n" }
    public static var expectation: String { "a whole number" }
}

extension UInt64: ExpressibleByArgument {
    public init?(argument: String) {
        guard argument.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let v = UInt64(argument) else { return nil }
        self = v
    }
    public static var defaultValueName: String { "n" }
    public static var expectation: String { "a whole number" }
}

extension UInt32: ExpressibleByArgument {
    public init?(argument: String) {
        guard argument.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let v = UInt32(argument) else { return nil }
        self = v
    }
    public static var defaultValueName: String { "n" }
    public static var expectation: String { "a whole number" }
}

extension Double: ExpressibleByArgument {
    public init?(argument: String) {
        guard let v = Double(argument), v.isFinite else { return nil }
        self = v
    }
    public static var defaultValueName: String { "n" }
    public static var expectation: String { "a number" }
}

/// How a shell completes a value.
public enum CompletionKind: Sendable, Equatable {
    /// Nothing to offer (free text, a vault path).
    case none
    /// A local file.
    case file
    /// A local folder.
    case directory
    /// One of these words.
    case list([String])
}
