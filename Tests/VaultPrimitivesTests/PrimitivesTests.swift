import Foundation
import XCTest
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// The shared primitives: hex, base64url, name rules, and the EINTR-safe I/O loops.
final class PrimitivesTests: XCTestCase {
    func testHexRoundTripsAndRefusesNonHex() {
        XCTAssertEqual(Hex.encode([0x00, 0x7f, 0x80, 0xff]), "007f80ff")
        XCTAssertEqual(Hex.decode("007F80ff"), [0x00, 0x7f, 0x80, 0xff])
        XCTAssertEqual(Hex.decode(""), [])
        for bad in ["0", "0g", "zz", "0 ", " 0", "٠١"] { XCTAssertNil(Hex.decode(bad), bad) }
        let bytes = (0...255).map(UInt8.init)
        XCTAssertEqual(Hex.decode(Hex.encode(bytes)), bytes)
        var out = [UInt8](repeating: 0, count: 4)
        [UInt8(0xab), 0xcd].withUnsafeBytes { b in out.withUnsafeMutableBytes { Hex.encode(b, into: $0) } }
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "abcd")
        XCTAssertTrue(Hex.isLowercase("00ff", count: 4))
        XCTAssertFalse(Hex.isLowercase("00FF", count: 4))
    }

    func testBase64URLIsCanonicalAndUnpadded() {
        XCTAssertEqual(Base64URL.encode([0xfb, 0xff]), "-_8")
        XCTAssertEqual(Base64URL.decode("-_8"), [0xfb, 0xff])
        for bad in ["-_8=", "+/8", "a", "-_9", "ab c"] { XCTAssertNil(Base64URL.decode(bad), bad) }
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(($0 * 37 + n) & 0xff) }
            XCTAssertEqual(Base64URL.decode(Base64URL.encode(bytes)), bytes)
        }
    }

    func testNameRules() {
        XCTAssertNil(NameRules.problem(with: "a.txt", maxBytes: 255))
        XCTAssertEqual(NameRules.problem(with: "", maxBytes: 255), .empty)
        XCTAssertEqual(NameRules.problem(with: ".", maxBytes: 255), .reserved)
        XCTAssertEqual(NameRules.problem(with: "..", maxBytes: 255), .reserved)
        XCTAssertNil(NameRules.problem(with: "...", maxBytes: 255))
        XCTAssertEqual(NameRules.problem(with: "a/b", maxBytes: 255), .containsSlash)
        XCTAssertEqual(NameRules.problem(with: "a\0b", maxBytes: 255), .containsNUL)
        XCTAssertEqual(NameRules.problem(with: String(repeating: "é", count: 128), maxBytes: 255), .tooLong(bytes: 256, max: 255))
        XCTAssertNil(NameRules.problem(with: String(repeating: "é", count: 128), maxBytes: 1024))
    }

    /// A write interrupted by a signal is continued, short writes included: a pipe whose reader
    /// takes the bytes slowly while SIGALRM keeps interrupting the writer.
    func testWriteAllAndReadFullyAcrossSignalsAndShortTransfers() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0   // no SA_RESTART: the calls really see EINTR
        var old = sigaction()
        sigaction(SIGALRM, &action, &old)
        defer { sigaction(SIGALRM, &old, nil) }
        var timer = itimerval(it_interval: timeval(tv_sec: 0, tv_usec: 2000), it_value: timeval(tv_sec: 0, tv_usec: 2000))
        setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &timer, nil)
        defer { var off = itimerval(); setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &off, nil) }
        let payload = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let done = DispatchSemaphore(value: 0)
        let received = Locked<[UInt8]>([])
        let reader = Thread { [fds] in
            var got = [UInt8](repeating: 0, count: payload.count + 1)
            let n = (try? got.withUnsafeMutableBytes { b in try Result { () throws(Errno) in try POSIXIO.readFully(fds[0], into: b) }.get() }) ?? -1
            received.set(Array(got.prefix(max(0, n))))
            close(fds[0])
            done.signal()
        }
        reader.start()
        try payload.withUnsafeBytes { b in try Result { () throws(Errno) in try POSIXIO.writeAll(fds[1], b) }.get() }
        close(fds[1])
        done.wait()
        XCTAssertEqual(received.get().count, payload.count, "readFully stops only at the end of the input")
        XCTAssertTrue(received.get() == payload)
    }

    func testFileSystemErrorsNameTheOperationAndPath() throws {
        XCTAssertThrowsError(try FileSystem.readAll("/nonexistent/x")) { e in
            let fe = e as? FileSystemError
            XCTAssertEqual(fe?.errno, .noEntry)
            XCTAssertEqual(fe?.description, "open /nonexistent/x: No such file or directory")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("prim-\(UUID().uuidString)").path
        try FileSystem.makeDirectory(dir)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileSystem.writeAtomically(Array("hello".utf8), to: dir + "/f")
        XCTAssertEqual(try FileSystem.readAll(dir + "/f"), Array("hello".utf8))
        XCTAssertFalse(FileSystem.exists(dir + "/f.tmp"))
    }
}

/// A value shared between threads under a lock.
final class Locked<T>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ v: T) { value = v }
    func get() -> T { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ v: T) { lock.lock(); value = v; lock.unlock() }
}
