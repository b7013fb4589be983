import Foundation

/// Human byte counts.
public enum ByteCount {
    public static func format(_ n: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(n), i = 0
        while v >= 1024 && i < units.count - 1 { v /= 1024; i += 1 }
        return i == 0 ? "\(n) B" : String(format: "%.1f %@", v, units[i])
    }

    /// Parses "10G", "512M", "4096", "1.5GiB".
    public static func parse(_ s: String) -> UInt64? {
        var t = s.trimmingCharacters(in: .whitespaces).uppercased()
        if t.hasSuffix("IB") { t.removeLast(2) } else if t.hasSuffix("B") { t.removeLast() }
        let mult: Double
        switch t.last {
        case "K": mult = 1024; t.removeLast()
        case "M": mult = 1_048_576; t.removeLast()
        case "G": mult = 1_073_741_824; t.removeLast()
        case "T": mult = 1_099_511_627_776; t.removeLast()
        default: mult = 1
        }
        guard let v = Double(t), v >= 0 else { return nil }
        return UInt64(v * mult)
    }
}
