/// `{"ok": true, "message": …}`: the result of a command whose outcome is one sentence
/// (docs/json.md lists which).
struct OKResult: Encodable {
    var ok = true
    var message: String
}

/// The error object every command prints with `--json` when it fails (docs/json.md): the kind
/// of `VaultError`, its message and hint, and the exit code.
struct ErrorResult: Encodable {
    struct Body: Encodable {
        var kind: String
        var message: String
        var hint: String?
        var exitCode: Int32
    }
    var error: Body
}
