import Bus

/// Events and bytes counted by a running loop (monitor, record, replay) and read by the code
/// that reports on it (a progress ticker, a timeout message).
final class Tally: Sendable {
    private let counts = Locked((events: 0, bytes: 0))
    func add(bytes: Int) {
        counts.withLock {
            $0.events += 1; $0.bytes += bytes
        }
    }
    var events: Int { counts.withLock { $0.events } }
    var bytes: Int { counts.withLock { $0.bytes } }
}
