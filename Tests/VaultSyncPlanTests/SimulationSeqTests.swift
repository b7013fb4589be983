import XCTest
import VaultSyncPlan
@testable import VaultSimulation

/// The two sequences of issue 18 (item 1) on simulated devices: the model server keeps the
/// sequence numbers the devices sealed, so a device sealing one lower than another device has
/// seen makes that device's pull refuse the honest server's record as a rollback. Both failed
/// with a device that kept sequence numbers only while the node was in its tree.
final class SimulationSeqTests: XCTestCase {
    private var sim: Simulation!
    private var dev0: SimDevice { sim.devices[0] }
    private var dev1: SimDevice { sim.devices[1] }

    override func setUp() { sim = Simulation(deviceCount: 2) }

    private func at(_ d: SimDevice, _ path: String) throws -> Node { try XCTUnwrap(d.node(path), "\(d.name) has no \(path)") }
    private func root(_ d: SimDevice) throws -> Node { try at(d, "/") }
    private func sync(_ d: SimDevice) throws { try d.sync(sim); XCTAssertNil(sim.failure) }

    /// dev0: mkdir /A, sync, mv /A /B, sync; dev1: sync; dev0: mv /B /C, rm -r /C, sync (the move
    /// replays from the folder's tombstone); dev1: sync.
    func testAMoveReplayedFromATombstoneTakesAHigherSequenceNumber() throws {
        XCTAssertTrue(dev0.mkdir(in: try root(dev0), name: "A"))
        try sync(dev0)
        XCTAssertTrue(dev0.move(try at(dev0, "/A"), into: try root(dev0), name: "B"))
        try sync(dev0)
        try sync(dev1)
        XCTAssertTrue(dev0.move(try at(dev0, "/B"), into: try root(dev0), name: "C"))
        _ = try dev0.remove(try at(dev0, "/C"), server: sim.server)
        try sync(dev0)
        try sync(dev1)
        XCTAssertEqual(dev1.tree(), sim.server.tree())
        XCTAssertEqual(dev0.tree(), sim.server.tree())
    }

    /// dev0: mkdir /C, sync, mv /C /D, sync; dev1: sync, put /D/x, sync; dev0: rm -r /D, sync (the
    /// edit brings /D back), mv /D /E, sync; dev1: sync.
    func testAFolderADeleteVersusEditBroughtBackTakesAHigherSequenceNumber() throws {
        XCTAssertTrue(dev0.mkdir(in: try root(dev0), name: "C"))
        try sync(dev0)
        XCTAssertTrue(dev0.move(try at(dev0, "/C"), into: try root(dev0), name: "D"))
        try sync(dev0)
        try sync(dev1)
        XCTAssertTrue(dev1.put(in: try at(dev1, "/D"), name: "x.txt", token: sim.token()))
        try sync(dev1)
        _ = try dev0.remove(try at(dev0, "/D"), server: sim.server)
        try sync(dev0)
        XCTAssertNotNil(dev0.node("/D/x.txt"), "the edit wins over the delete")
        XCTAssertTrue(dev0.move(try at(dev0, "/D"), into: try root(dev0), name: "E"))
        try sync(dev0)
        try sync(dev1)
        XCTAssertNotNil(dev1.node("/E/x.txt"))
        XCTAssertEqual(dev1.tree(), sim.server.tree())
    }
}
