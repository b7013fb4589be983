import Foundation
import VaultAPI
import XCTest

/// The typed contracts of the API (`APIErrorCode`, `UploadState`) keep the strings on the wire.
final class APIContractTests: XCTestCase {
    func testAnErrorBodyCarriesItsCodeAsABareString() throws {
        let body = try APIJSON.encoder().encode(APIErrorBody(code: .versionMismatch, message: "m"))
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: body) as? [String: [String: String]])
        XCTAssertEqual(json["error"], ["code": "version_mismatch", "message": "m"])
    }

    func testACodeThisVersionDoesNotKnowStillDecodes() throws {
        let raw = Data(#"{"error":{"code":"from_a_newer_server","message":"m"}}"#.utf8)
        let detail = try APIJSON.decoder().decode(APIErrorBody.self, from: raw).error
        XCTAssertEqual(detail.code, APIErrorCode(rawValue: "from_a_newer_server"))
        XCTAssertNotEqual(detail.code, .notFound)
        XCTAssertEqual("\(detail.code)", "from_a_newer_server")
    }

    func testUploadStatesAreTheDocumentsEnum() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
        let doc = try String(contentsOf: url, encoding: .utf8)
        let states = [UploadState.active, .complete].map(\.rawValue)
        XCTAssertTrue(doc.contains("state: { type: string, enum: [\(states.joined(separator: ", "))] }"))
        let encoded = try APIJSON.encoder().encode([UploadState.complete])
        XCTAssertEqual(String(decoding: encoded, as: UTF8.self), #"["complete"]"#)
    }
}
