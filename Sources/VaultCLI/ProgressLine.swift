import Foundation
import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress bar (bytes, rate, ETA) on standard error when it is a terminal; nothing
/// at all when piped or redirected.
final class ProgressLine {
    private let enabled: Bool
    private var path: String?
    private var started = Date()
    private var startBytes: Int64 = 0

    init(enabled: Bool) { self.enabled = enabled && isatty(2) == 1 }

    func update(_ p: TransferProgress) {
        guard enabled else { return }
        if path != p.path { path = p.path; started = Date(); startBytes = p.bytesDone }
        let elapsed = Date().timeIntervalSince(started)
        let rate = elapsed > 0.5 ? Double(p.bytesDone - startBytes) / elapsed : 0
        let percent = p.bytesTotal > 0 ? p.bytesDone * 100 / p.bytesTotal : 100
        var line = "\(p.direction == .upload ? "up" : "down") \(DisplayText.escaped(p.path))  \(percent)%  "
            + "\(ByteCount.format(UInt64(max(0, p.bytesDone))))/\(ByteCount.format(UInt64(max(0, p.bytesTotal))))"
        if rate > 0 {
            line += "  \(ByteCount.format(UInt64(rate)))/s  ETA \(Int((Double(p.bytesTotal - p.bytesDone) / rate).rounded(.up))) s"
        }
        StandardStream.error.write("\r\u{1b}[K" + line)
    }

    func clear() {
        guard enabled, path != nil else { return }
        StandardStream.error.write("\r\u{1b}[K")
        path = nil
    }
}
