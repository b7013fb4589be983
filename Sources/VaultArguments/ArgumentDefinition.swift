import Foundation
/// One declared option, flag or positional argument, as the parser, help, the manual and the
/// completions read it. Made from a property wrapper and the name of its property.
public struct ArgumentDefinition {
    public enum Kind: Sendable, Equatable {
        /// `--name value` (or `--name=value`, `-n value`).
        case option
        /// `--name`, no value.
        case flag
        /// A word in order, not introduced by a dash.
        case positional
    }

    public var kind: Kind
    /// The long name without dashes (`kdf-time`); nil for positionals.
    public var longName: String?
    /// The single-letter name (`r` for `-r`), if any.
    public var shortName: Character?
    /// One or two sentences for help and the manual.
    public var help: String
    /// The value placeholder (`seconds`, `path`), shown as `<seconds>` in help.
    public var valueName: String
    /// How shells complete the value.
    public var completion: CompletionKind
    /// Must be given (a positional without default, an option of a non-optional type).
    public var isRequired: Bool
    /// May be given more than once, each value kept (`[T]`).
    public var isRepeating: Bool
    /// Left out of help, the manual and completions.
    public var isHidden: Bool
    /// What the value is when the option is not given, for help (`0.5`).
    public var defaultDescription: String?

    let declaration: Declaration

    /// `--kdf-time`, `-r`, or `<path>`: how errors name it.
    public var displayName: String {
        if kind == .positional { return "<\(valueName)>" }
        if let longName { return "--" + longName }
        return "-" + String(shortName!)
    }

    /// The names for help: `-r, --recursive`, `--kdf <kdf>`, `<path>`.
    public var helpNames: String {
        if kind == .positional { return "<\(valueName)>" + (isRepeating ? " ..." : "") }
        var names: [String] = []
        if let shortName { names.append("-" + String(shortName)) }
        if let longName { names.append("--" + longName) }
        return names.joined(separator: ", ") + (kind == .option ? " <\(valueName)>" : "")
    }
}

/// What a property wrapper knows before the parser names it: everything but the property's name.
struct Declaration {
    var kind: ArgumentDefinition.Kind
    var name: String?
    var short: Character?
    var help: String
    var valueName: String?
    var completion: CompletionKind
    var isRequired: Bool
    var isRepeating: Bool
    var isHidden: Bool
    var defaultDescription: String?
    /// For errors: what a valid value looks like.
    var expectation: String
    /// Stores a value (options, positionals); false when it does not parse.
    var assign: (String) -> Bool
    /// Whether a value (or the flag) was given.
    var isSet: () -> Bool

    /// The definition for the property `label` (`_kdfTime` → `--kdf-time`, `<kdf-time>`).
    func definition(label: String?) -> ArgumentDefinition {
        let derived = Self.dashCase(String((label ?? "value").drop { $0 == "_" }))
        return ArgumentDefinition(kind: kind, longName: kind == .positional ? nil : (name ?? derived), shortName: short,
                                  help: help, valueName: valueName ?? (kind == .positional ? derived : "value"),
                                  completion: completion, isRequired: isRequired, isRepeating: isRepeating,
                                  isHidden: isHidden, defaultDescription: defaultDescription, declaration: self)
    }

    /// `kdfTime` → `kdf-time`, `pbkdf2Iterations` → `pbkdf2-iterations`, `caFile` → `ca-file`.
    static func dashCase(_ s: String) -> String {
        var out = ""
        for c in s {
            if c.isUppercase { if !out.isEmpty { out += "-" }; out += c.lowercased() } else { out.append(c) }
        }
        return out
    }
}

/// Shared storage of one declared value: the property wrapper and every copy of the command
/// value point at the same slot, so the parser can fill it after `init()`.
final class Slot<Value> {
    var value: Value?
    var given = false
    init(_ value: Value?) { self.value = value }
}

/// A property wrapper that declares one option, flag or argument.
protocol DeclarationProvider {
    var declaration: Declaration { get }
}

/// An `@OptionGroup`: its declarations are read from the group's value.
protocol OptionGroupProvider {
    var groupValue: any ParsableArguments { get }
}

extension ParsableArguments {
    /// Every declaration of this value and of its option groups, in declaration order.
    public var definitions: [ArgumentDefinition] {
        var out: [ArgumentDefinition] = []
        for child in Mirror(reflecting: self).children {
            if let p = child.value as? DeclarationProvider {
                out.append(p.declaration.definition(label: child.label))
            } else if let g = child.value as? OptionGroupProvider {
                out += g.groupValue.definitions
            }
        }
        return out
    }

    /// The option groups' values, for `validate()`.
    var optionGroups: [any ParsableArguments] {
        Mirror(reflecting: self).children.compactMap { ($0.value as? OptionGroupProvider)?.groupValue }
    }
}
