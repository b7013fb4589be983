import XCTest
import VaultServer

/// `docs/openapi.yaml` and the server's route table list the same routes, and every listed
/// route is actually served.
final class OpenAPITests: XCTestCase {
    /// `(METHOD, /path)` pairs from the document's `paths:` section (a line-based parse).
    static func documentedRoutes() throws -> Set<String> {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
        let text = try String(contentsOf: url, encoding: .utf8)
        var routes = Set<String>()
        var inPaths = false
        var current: String?
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("paths:") { inPaths = true; continue }
            if inPaths && !line.isEmpty && !line.hasPrefix(" ") { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /") && line.hasSuffix(":") {
                current = String(line.dropFirst(2).dropLast())
            } else if let current, line.hasPrefix("    "), !line.hasPrefix("     ") {
                let key = line.trimmingCharacters(in: .whitespaces)
                for m in ["get", "post", "put", "patch", "delete"] where key == m + ":" {
                    routes.insert("\(m.uppercased()) \(current)")
                }
            }
        }
        return routes
    }

    func testDocumentMatchesRouteTable() throws {
        let documented = try Self.documentedRoutes()
        let served = Set(RouteTable.routes.map { "\($0.method) \($0.path)" })
        XCTAssertGreaterThanOrEqual(documented.count, 20)
        XCTAssertEqual(documented.subtracting(served), [], "documented but not in the route table")
        XCTAssertEqual(served.subtracting(documented), [], "served but missing from docs/openapi.yaml")
    }

    func testEveryDocumentedRouteIsServed() throws {
        let s = try ServerProcess(args: ["--test-faults"])
        let u = try APIUser(s, "alice")
        for route in try Self.documentedRoutes().sorted() {
            let parts = route.split(separator: " ")
            let method = String(parts[0])
            let path = parts[1].replacingOccurrences(of: "{id}", with: "x").replacingOccurrences(of: "{rid}", with: "y")
            if path == "/v1/events" {
                let fd = try s.client.connect(timeout: 5)
                defer { close(fd) }
                try s.client.writeAll(fd, s.client.requestHead("GET", path, headers: ["Authorization": "Bearer \(u.token)"], bodyLength: nil))
                var text = ""
                XCTAssertTrue(s.client.read(fd, until: "HTTP/1.1 200", into: &text, timeout: 5), route)
                continue
            }
            let r = try u.send(method, path, body: method == "GET" || method == "DELETE" ? [] : Array("{}".utf8))
            XCTAssertNotEqual(r.errorCode, "route_not_found", route)
            XCTAssertNotEqual(r.status, 405, route)
            XCTAssertLessThan(r.status, 500, "\(route): \(r.text)")
        }
        let unknown = try u.send("GET", "/v1/unlisted")
        XCTAssertEqual(unknown.errorCode, "route_not_found")
    }
}
