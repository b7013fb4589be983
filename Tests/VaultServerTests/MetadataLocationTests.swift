import XCTest
@testable import VaultServer

/// `--metadata` as `serve`, `migrate` and the `user` commands read it.
final class MetadataLocationTests: XCTestCase {
    func testTheDefaultIsTheDataFoldersSQLiteFileAndAURLIsPostgreSQL() {
        XCTAssertEqual(MetadataLocation(argument: nil, dataDir: "/srv/v"), .sqlite(path: "/srv/v/meta.db"))
        XCTAssertEqual(MetadataLocation(argument: "", dataDir: "/srv/v"), .sqlite(path: "/srv/v/meta.db"))
        XCTAssertEqual(MetadataLocation(argument: "/elsewhere/m.db", dataDir: "/srv/v"), .sqlite(path: "/elsewhere/m.db"))
        let url = "postgresql://vault:s3cret@db:5432/vault"
        XCTAssertEqual(MetadataLocation(argument: url, dataDir: "/srv/v"), .postgresql(url: url))
        XCTAssertEqual(MetadataLocation(argument: "postgres://h/d", dataDir: "/srv/v"), .postgresql(url: "postgres://h/d"))
        XCTAssertEqual(MetadataLocation.postgresql(url: url).description, "postgresql://vault:***@db:5432/vault")
    }

    func testServeUserAndMigrateTakeMetadata() throws {
        guard case .serve(let config, _) = try ServerCommand.parse(["serve", "--data", "/d", "--metadata", "postgresql://h/x"]) else {
            return XCTFail("not serve")
        }
        XCTAssertEqual(config.metadataLocation, .postgresql(url: "postgresql://h/x"))
        guard case .user(_, let metadata, .list, _) = try ServerCommand.parse(["user", "list", "--data", "/d", "--metadata", "postgresql://h/x"]) else {
            return XCTFail("not user list")
        }
        XCTAssertEqual(metadata, "postgresql://h/x")
        guard case .migrate(let location, nil) = try ServerCommand.parse(["migrate", "--data", "/d"]) else { return XCTFail("not migrate") }
        XCTAssertEqual(location, .sqlite(path: "/d/meta.db"))
        XCTAssertThrowsError(try ServerCommand.parse(["migrate"]), "migrate needs --metadata or --data")
    }
}
