/// A device's chosen name (`vault config set device-name`): what conflict copies, revisions,
/// conflicts and key changes call the device, carried to the other devices sealed inside the
/// records it writes (SECURITY.md "Node record", `deviceName`).
public enum DeviceName {
    /// Whether `name` may be a device's name: 1 to 64 characters, no `/` and no control characters.
    public static func isValid(_ name: String) -> Bool {
        let count = name.count
        return count >= 1 && count <= 64 && !name.unicodeScalars.contains { $0 == "/" || $0.properties.generalCategory == .control
            || $0.properties.generalCategory == .format || $0 == "\u{2028}" || $0 == "\u{2029}" }
    }

    /// How listings name the device `id` that said `name`: its name when it said a valid one,
    /// else `device 1a2b3c4d` (the first 8 characters of its id).
    public static func label(id: String, name: String?) -> String {
        if let name, isValid(name) { return name }
        return "device " + String(id.prefix(8))
    }
}
