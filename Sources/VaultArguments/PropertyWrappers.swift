import Foundation

/// An option with a value: `--name value`, `--name=value` (or `-n value` with a short name).
/// The property's type says what the option is: `T` with a default (optional to give), `T`
/// without one (required), `T?` (optional, nil when not given), `[T]` (repeatable).
@propertyWrapper
public struct Option<Value>: DeclarationProvider {
    let slot: Slot<Value>
    let declaration: Declaration

    public var wrappedValue: Value {
        get { slot.read(declaration) }
        nonmutating set { slot.value = newValue }
    }
}

extension Option where Value: ExpressibleByArgument {
    /// An option with a default: `@Option(help: "…") var concurrency = 4`.
    public init(wrappedValue: Value, name: String? = nil, short: Character? = nil, help: String,
                valueName: String? = nil, completion: CompletionKind? = nil, hidden: Bool = false) {
        let slot = Slot<Value>(wrappedValue)
        self.slot = slot
        declaration = Declaration(.option, Value.self, name: name, short: short, help: help, valueName: valueName, completion: completion,
                                  hidden: hidden, defaultDescription: "\(wrappedValue)", slot: slot, store: { $0 })
    }

    /// A required option: `@Option(help: "…") var data: String`.
    public init(name: String? = nil, short: Character? = nil, help: String,
                valueName: String? = nil, completion: CompletionKind? = nil, hidden: Bool = false) {
        let slot = Slot<Value>(nil)
        self.slot = slot
        declaration = Declaration(.option, Value.self, name: name, short: short, help: help, valueName: valueName, completion: completion,
                                  hidden: hidden, required: true, slot: slot, store: { $0 })
    }
}

extension Option {
    /// An optional option: `@Option(help: "…") var budget: ByteSize?` (nil when not given).
    public init<T: ExpressibleByArgument>(name: String? = nil, short: Character? = nil, help: String,
                                          valueName: String? = nil, completion: CompletionKind? = nil, hidden: Bool = false) where Value == T? {
        let slot = Slot<Value>(.some(nil))
        self.slot = slot
        declaration = Declaration(.option, T.self, name: name, short: short, help: help, valueName: valueName, completion: completion,
                                  hidden: hidden, slot: slot, store: { $0 })
    }

    /// A repeatable option: `@Option(help: "…") var exclude: [String] = []`, one value each time.
    public init<T: ExpressibleByArgument>(wrappedValue: [T] = [], name: String? = nil, short: Character? = nil, help: String,
                                          valueName: String? = nil, completion: CompletionKind? = nil, hidden: Bool = false) where Value == [T] {
        let slot = Slot<Value>(wrappedValue)
        self.slot = slot
        declaration = Declaration(.option, T.self, name: name, short: short, help: help, valueName: valueName, completion: completion,
                                  hidden: hidden, repeating: true, slot: slot, store: { v in (slot.given ? slot.value ?? [] : []) + [v] })
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
        get { slot.read(declaration) }
        nonmutating set { slot.value = newValue }
    }
}

extension Argument where Value: ExpressibleByArgument {
    /// A required argument: `@Argument(help: "…") var path: String`.
    public init(help: String, valueName: String? = nil, completion: CompletionKind? = nil) {
        let slot = Slot<Value>(nil)
        self.slot = slot
        declaration = Declaration(.positional, Value.self, help: help, valueName: valueName, completion: completion,
                                  required: true, slot: slot, store: { $0 })
    }

    /// An argument with a default: `@Argument(help: "…") var path = "/"`.
    public init(wrappedValue: Value, help: String, valueName: String? = nil, completion: CompletionKind? = nil) {
        let slot = Slot<Value>(wrappedValue)
        self.slot = slot
        declaration = Declaration(.positional, Value.self, help: help, valueName: valueName, completion: completion,
                                  defaultDescription: "\(wrappedValue)", slot: slot, store: { $0 })
    }
}

extension Argument {
    /// An optional argument: `@Argument(help: "…") var dest: String?`.
    public init<T: ExpressibleByArgument>(help: String, valueName: String? = nil, completion: CompletionKind? = nil) where Value == T? {
        let slot = Slot<Value>(.some(nil))
        self.slot = slot
        declaration = Declaration(.positional, T.self, help: help, valueName: valueName, completion: completion, slot: slot, store: { $0 })
    }

    /// Every remaining word: `@Argument(help: "…") var paths: [String] = []`.
    public init<T: ExpressibleByArgument>(wrappedValue: [T] = [], help: String, valueName: String? = nil,
                                          completion: CompletionKind? = nil) where Value == [T] {
        let slot = Slot<Value>(wrappedValue)
        self.slot = slot
        declaration = Declaration(.positional, T.self, help: help, valueName: valueName, completion: completion,
                                  repeating: true, slot: slot, store: { v in (slot.given ? slot.value ?? [] : []) + [v] })
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

extension Slot {
    /// The value, which must be there (a required declaration is checked by the parser).
    func read(_ d: Declaration) -> Value {
        guard let v = value else { fatalError("\(d.name ?? d.valueName ?? "a required value") was read before parsing") }
        return v
    }
}

extension Declaration {
    /// An option or positional of values of type `T`, stored in `slot` as `store` makes them (the
    /// value itself, or the list so far with one more).
    init<T: ExpressibleByArgument, V>(_ kind: ArgumentDefinition.Kind, _ type: T.Type, name: String? = nil, short: Character? = nil,
                                      help: String, valueName: String?, completion: CompletionKind?, hidden: Bool = false,
                                      required: Bool = false, repeating: Bool = false, defaultDescription: String? = nil,
                                      slot: Slot<V>, store: @escaping (T) -> V) {
        self.init(kind: kind, name: name, short: short, help: help,
                  valueName: valueName ?? (kind == .positional ? nil : T.defaultValueName),
                  completion: completion ?? T.defaultCompletion, isRequired: required, isRepeating: repeating, isHidden: hidden,
                  defaultDescription: defaultDescription, expectation: T.expectation,
                  assign: { s in
                      guard let v = T(argument: s) else { return false }
                      slot.value = store(v)
                      slot.given = true
                      return true
                  },
                  isSet: { slot.given })
    }
}
