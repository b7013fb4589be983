import Foundation
import VaultCrypto
import VaultPrimitives
import VaultTestSupport
import XCTest
@testable import VaultTPM

/// docs/tpm.md is precise enough for another program: scripts/independent-tpm-unseal.py
/// (tpm2-pytss, no vault code) derives the same primary and unseals what VaultTPM sealed, with a
/// PIN and with a PCR binding.
final class IndependentUnsealTests: XCTestCase {
    static let python = "/usr/bin/python3"
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/independent-tpm-unseal.py").path
    }

    var tpm: SoftwareTPM!

    override func setUpWithError() throws {
        try XCTSkipUnless(SoftwareTPM.available, "needs swtpm (scripts/install-deps.sh installs it)")
        try XCTSkipUnless(Self.pytssAvailable, "needs python3-tpm2-pytss (scripts/install-deps.sh installs it)")
        tpm = try SoftwareTPM()
    }

    override func tearDown() { tpm = nil }

    static var pytssAvailable: Bool {
        (try? run([python, "-c", "import tpm2_pytss"], input: Data()))?.status == 0
    }

    static func run(_ args: [String], input: Data) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: args[0])
        p.arguments = Array(args.dropFirst())
        let i = Pipe(), o = Pipe(), e = Pipe()
        p.standardInput = i; p.standardOutput = o; p.standardError = e
        try p.run()
        i.fileHandleForWriting.write(input)
        try i.fileHandleForWriting.close()
        let out = o.fileHandleForReading.readDataToEndOfFile()
        let err = e.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
                String(decoding: err, as: UTF8.self))
    }

    private func unsealIndependently(_ sealed: TPMSealedObject, auth: [UInt8], extra: [String] = []) throws -> (status: Int32, out: String, err: String) {
        let req: [String: Any] = ["tcti": tpm.tcti, "public": Hex.encode(sealed.publicArea), "private": Hex.encode(sealed.privateArea),
                                  "pcrs": sealed.pcrs.indexes, "auth": Hex.encode(auth)]
        return try Self.run([Self.python, Self.script] + extra, input: try JSONSerialization.data(withJSONObject: req))
    }

    func testTheSameTemplateGivesTheSamePrimary() throws {
        let r = try unsealIndependently(TPMSealedObject(publicArea: [], privateArea: [], pcrs: .none), auth: [], extra: ["--primary-name"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, Hex.encode(try TPM(tcti: tpm.tcti).primaryName()))
    }

    func testAnIndependentProgramUnsealsWithAndWithoutPINAndPCRs() throws {
        let t = try TPM(tcti: tpm.tcti)
        let pin = Array("2468".utf8)
        for (auth, pcrs) in [([UInt8](), PCRSelection.none), (pin, .none), (pin, PCRSelection(list: "16,23")!)] {
            let secret = SecureBytes.random(count: 32)
            let sealed = try t.seal(secret, auth: auth.isEmpty ? nil : SecureBytes(copying: auth), pcrs: pcrs)
            let r = try unsealIndependently(sealed, auth: auth)
            XCTAssertEqual(r.status, 0, "pin \(!auth.isEmpty), pcrs \(pcrs): \(r.err)")
            XCTAssertEqual(r.out, secret.withUnsafeBytes { Hex.encode(Array($0)) })
        }
        // And it is refused as the spec says: a wrong PIN.
        let sealed = try t.seal(SecureBytes.random(count: 32), auth: SecureBytes(copying: pin), pcrs: .none)
        let wrong = try unsealIndependently(sealed, auth: Array("0000".utf8))
        XCTAssertEqual(wrong.status, 1)
        XCTAssertEqual(wrong.out, "")
    }
}
