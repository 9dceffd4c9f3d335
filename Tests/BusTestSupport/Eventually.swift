/// Polls `condition` until it holds or the deadline passes: tests wait on conditions with
/// deadlines, never on fixed sleeps. Shared by every test target.
public func eventually(
    timeout: Duration = .seconds(10), every: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    repeat {
        if try await condition() { return true }
        // Cancelled: one last look, without waiting out the deadline.
        do { try await Task.sleep(for: every) } catch { break }
    } while ContinuousClock.now < deadline
    return try await condition()
}
