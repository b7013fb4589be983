import Foundation
import VaultTestSupport
import XCTest

/// The server deployment the client suites run against: the embedded one-process server by
/// default; with `VAULT_TEST_DEPLOYMENT=balanced` (scripts/test.sh's distributed part) every
/// `ServerHarness` a test starts as one embedded instance is three instances on a fresh
/// PostgreSQL database and a fresh bucket of a SeaweedFS S3 store, behind haproxy round-robin,
/// so the same tests show the distributed mode keeps every promise the embedded one does.
enum Deployment {
    /// Whether `VAULT_TEST_DEPLOYMENT` asks for the balanced deployment.
    static var balanced: Bool { ProcessInfo.processInfo.environment["VAULT_TEST_DEPLOYMENT"] == "balanced" }

    /// How many instances a balanced deployment runs.
    static let instances = 3

    /// The instance count, `--metadata` and `--content` of a new balanced deployment (a test
    /// skips, saying what to install, when a part is missing).
    static func stores() throws -> (instances: Int, metadata: String?, content: String?) {
        try XCTSkipUnless(PostgresCluster.available, PostgresCluster.unavailableMessage)
        try XCTSkipUnless(Balancer.available, Balancer.unavailableMessage)
        try XCTSkipUnless(SeaweedS3.available, SeaweedS3.unavailableMessage)
        return (instances, try PostgresCluster.shared().makeDatabase(), try SeaweedS3.shared().makeBucket())
    }
}
