import Foundation

/// Runs `body(i)` for i in 0..<n on n real threads at once and waits for all.
func runConcurrently(_ n: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<n {
        group.enter()
        let t = Thread { body(i); group.leave() }
        t.stackSize = 1 << 20
        t.start()
    }
    group.wait()
}
