import Foundation
/// An option with a value: `--name value`, `--name=value` (or `-n value` with a short name).
/// The property's type says what the option is: `T` with a default (optional to give), `T`
/// without one (required), `T?` (optional, nil when not given), `[T]` (repeatable).
@propertyWrapper
public struct Option<Value>: DeclarationProvider {
    let slot: Slot<Value>
    let declaration: Declaration

    public var wrappedValue: Value {
        get {
            guard let v = slot.value else { fatalError("the required option \(declaration.name ?? "") was read before parsing") }
            return v
        }
        nonmutating set { slot.value = newValue }
    }
}

extension Option where Value: ExpressibleByArgument {
    /// An option with a default: `@Option(help: "…") var concurrency = 4`.
    public init(wrappedValue: Value, name: String? = nil, short: Character? = nil, help: String,
                valueName: String? = nil, completion: CompletionKind? = nil, hidden: Bool = false) {
        let slot = Slot<Value>(wrappedValue)
        self.slot = slot
        declaration = Declaration(kind: .option, name: name, short: short, help: help, valueName: valueName ?? Value.defaultValueName,
                                  completion: completion ?? Value.defaultCompletion, isRequired: false, isRepeating: false,
                                  isHidden: hidden, defaultDescription: "\(wrappedValue)", expectation: Value.expectation,
                                  assign: { s in guard let v = Value(argument: s) else { return false }; slot.value = v; slot.given = true; return true },
                                  isSet: { slot.given })
    }

    /// A required option: `@Option(help: "…") var data: String`.
    public init(name: String? = nil, short: Character? = nil, help: String,
                valueName: String? = nil, completion: CompletionKind? = nil, hidden: Bool = false) {
        let slot = Slot<Value>(nil)
        self.slot = slot
        declaration = Declaration(kind: .option, name: name, short: short, help: help, valueName: valueName ?? Value.defaultValueName,
                                  completion: completion ?? Value.defaultCompletion, isRequired: true, isRepeating: false,
                                  isHidden: hidden, defaultDescription: nil, expectation: Value.expectation,
                                  assign: { s in guard let v = Value(argument: s) else { return false }; slot.value = v; slot.given = true; return true },
                                  isSet: { slot.given })
    }
}

extension Option {
    /// An optional option: `@Option(help: "…") var budget: ByteSize?` (nil when not given).
    public init<T: ExpressibleByArgument>(name: String? = nil, short: Character? = nil, help: String,
                                          valueName: String? = nil, completion: CompletionKind? = nil, hidden: Bool = false) where Value == T? {
        let slot = Slot<Value>(.some(nil))
        self.slot = slot
        declaration = Declaration(kind: .option, name: name, short: short, help: help, valueName: valueName ?? T.defaultValueName,
                                  completion: completion ?? T.defaultCompletion, isRequired: false, isRepeating: false,
                                  isHidden: hidden, defaultDescription: nil, expectation: T.expectation,
                                  assign: { s in guard let v = T(argument: s) else { return false }; slot.value = v; slot.given = true; return true },
                                  isSet: { slot.given })
    }

    /// A repeatable option: `@Option(help: "…") var exclude: [String] = []`, one value each time.
    public init<T: ExpressibleByArgument>(wrappedValue: [T] = [], name: String? = nil, short: Character? = nil, help: String,
                                          valueName: String? = nil, completion: CompletionKind? = nil, hidden: Bool = false) where Value == [T] {
        let slot = Slot<Value>(wrappedValue)
        self.slot = slot
        declaration = Declaration(kind: .option, name: name, short: short, help: help, valueName: valueName ?? T.defaultValueName,
                                  completion: completion ?? T.defaultCompletion, isRequired: false, isRepeating: true,
                                  isHidden: hidden, defaultDescription: nil, expectation: T.expectation,
                                  assign: { s in
                                      guard let v = T(argument: s) else { return false }
                                      if !slot.given { slot.value = [] }
                                      slot.value!.append(v); slot.given = true; return true
                                  },
                                  isSet: { slot.given })
    }
}

/// A flag: `--name` (or `-n`), true when given. Bundled short flags (`-rf`) are accepted.
@propertyWrapper
public struct Flag: DeclarationProvider {
    let slot: Slot<Bool>
    let declaration: Declaration

    public var wrappedValue: Bool {
        get { slot.value ?? false }
        nonmutating set { slot.value = newValue }
    }

    /// `@Flag(help: "…") var recursive = false`.
    public init(wrappedValue: Bool = false, name: String? = nil, short: Character? = nil, help: String, hidden: Bool = false) {
        let slot = Slot<Bool>(wrappedValue)
        self.slot = slot
        declaration = Declaration(kind: .flag, name: name, short: short, help: help, valueName: nil, completion: .none,
                                  isRequired: false, isRepeating: false, isHidden: hidden, defaultDescription: nil, expectation: "",
                                  assign: { _ in slot.value = true; slot.given = true; return true },
                                  isSet: { slot.given })
    }
}

/// A positional argument. `T` is required, `T?` optional, `[T]` takes every remaining word.
/// Optional and repeating arguments come after the required ones.
@propertyWrapper
public struct Argument<Value>: DeclarationProvider {
    let slot: Slot<Value>
    let declaration: Declaration

    public var wrappedValue: Value {
        get {
            guard let v = slot.value else { fatalError("the argument <\(declaration.valueName ?? "")> was read before parsing") }
            return v
        }
        nonmutating set { slot.value = newValue }
    }
}

extension Argument where Value: ExpressibleByArgument {
    /// A required argument: `@Argument(help: "…") var path: String`.
    public init(help: String, valueName: String? = nil, completion: CompletionKind? = nil) {
        let slot = Slot<Value>(nil)
        self.slot = slot
        declaration = Declaration(kind: .positional, name: nil, short: nil, help: help, valueName: valueName,
                                  completion: completion ?? Value.defaultCompletion, isRequired: true, isRepeating: false,
                                  isHidden: false, defaultDescription: nil, expectation: Value.expectation,
                                  assign: { s in guard let v = Value(argument: s) else { return false }; slot.value = v; slot.given = true; return true },
                                  isSet: { slot.given })
    }

    /// An argument with a default: `@Argument(help: "…") var path = "/"`.
    public init(wrappedValue: Value, help: String, valueName: String? = nil, completion: CompletionKind? = nil) {
        let slot = Slot<Value>(wrappedValue)
        self.slot = slot
        declaration = Declaration(kind: .positional, name: nil, short: nil, help: help, valueName: valueName,
                                  completion: completion ?? Value.defaultCompletion, isRequired: false, isRepeating: false,
                                  isHidden: false, defaultDescription: "\(wrappedValue)", expectation: Value.expectation,
                                  assign: { s in guard let v = Value(argument: s) else { return false }; slot.value = v; slot.given = true; return true },
                                  isSet: { slot.given })
    }
}

extension Argument {
    /// An optional argument: `@Argument(help: "…") var dest: String?`.
    public init<T: ExpressibleByArgument>(help: String, valueName: String? = nil, completion: CompletionKind? = nil) where Value == T? {
        let slot = Slot<Value>(.some(nil))
        self.slot = slot
        declaration = Declaration(kind: .positional, name: nil, short: nil, help: help, valueName: valueName,
                                  completion: completion ?? T.defaultCompletion, isRequired: false, isRepeating: false,
                                  isHidden: false, defaultDescription: nil, expectation: T.expectation,
                                  assign: { s in guard let v = T(argument: s) else { return false }; slot.value = v; slot.given = true; return true },
                                  isSet: { slot.given })
    }

    /// Every remaining word: `@Argument(help: "…") var paths: [String] = []`.
    public init<T: ExpressibleByArgument>(wrappedValue: [T] = [], help: String, valueName: String? = nil,
                                          completion: CompletionKind? = nil) where Value == [T] {
        let slot = Slot<Value>(wrappedValue)
        self.slot = slot
        declaration = Declaration(kind: .positional, name: nil, short: nil, help: help, valueName: valueName,
                                  completion: completion ?? T.defaultCompletion, isRequired: false, isRepeating: true,
                                  isHidden: false, defaultDescription: nil, expectation: T.expectation,
                                  assign: { s in
                                      guard let v = T(argument: s) else { return false }
                                      if !slot.given { slot.value = [] }
                                      slot.value!.append(v); slot.given = true; return true
                                  },
                                  isSet: { slot.given })
    }
}

/// Options several commands share, declared once (`struct OutputOptions: ParsableArguments`)
/// and included with `@OptionGroup var output: OutputOptions`.
@propertyWrapper
public struct OptionGroup<Value: ParsableArguments>: OptionGroupProvider {
    public var wrappedValue: Value
    public init() { wrappedValue = Value() }
    var groupValue: any ParsableArguments { wrappedValue }
}
