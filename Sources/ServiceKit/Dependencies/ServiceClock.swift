import Bus
import Foundation

/// The time and the way to wait, as a dependency: the real clocks, or a manual one that tests
/// advance by hand (no sleeps in tests).
public struct ServiceClock: Sendable {
    /// Wall-clock time (timestamps, expiry dates).
    public var now: @Sendable () -> Date
    /// Monotonic time since an arbitrary origin (durations, ages): never jumps with the wall clock.
    public var uptime: @Sendable () -> Duration
    /// Waits `duration` on this clock; throws `CancellationError` when the task is cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void

    public init(
        now: @escaping @Sendable () -> Date, uptime: @escaping @Sendable () -> Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        self.now = now
        self.uptime = uptime
        self.sleep = sleep
    }

    /// `Date()`, the monotonic clock, `Task.sleep`.
    public static let live = ServiceClock(
        now: { Date() }, uptime: { .nanoseconds(MonotonicTime.now.nanoseconds) }, sleep: { try await Task.sleep(for: $0) })

    /// A clock that moves only when `clock.advance(by:)` is called.
    public static func manual(_ clock: ManualClock) -> ServiceClock {
        ServiceClock(now: { clock.now }, uptime: { clock.uptime }, sleep: { try await clock.sleep(for: $0) })
    }
}

/// A clock for tests: time stands still until ``advance(by:)``, which wakes the sleepers whose
/// deadline has come.
public final class ManualClock: Sendable {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, Error>?
        var cancelled = false
    }

    private struct State {
        var now: Date
        var uptime: Duration = .zero
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
    }

    private let state: Locked<State>

    public init(now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Locked(State(now: now))
    }

    public var now: Date { state.withLock { $0.now } }

    /// The time advanced so far.
    public var uptime: Duration { state.withLock { $0.uptime } }

    /// How many tasks are sleeping on this clock.
    public var sleepers: Int { state.withLock { $0.sleepers.values.filter { $0.continuation != nil }.count } }

    /// The earliest deadline among the sleepers.
    public var nextDeadline: Date? { state.withLock { $0.sleepers.values.filter { $0.continuation != nil }.map(\.deadline).min() } }

    /// Moves time forward and wakes the sleepers whose deadline has come.
    public func advance(by duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let due: [CheckedContinuation<Void, Error>] = state.withLock { s in
            s.now = s.now.addingTimeInterval(seconds)
            s.uptime += duration
            var due: [CheckedContinuation<Void, Error>] = []
            for (id, sleeper) in s.sleepers where sleeper.deadline <= s.now {
                if let continuation = sleeper.continuation { due.append(continuation) }
                s.sleepers[id] = nil
            }
            return due
        }
        for continuation in due { continuation.resume() }
    }

    /// Waits until the clock has been advanced by `duration`; throws `CancellationError` when cancelled.
    public func sleep(for duration: Duration) async throws {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let id = state.withLock { s in
            s.nextID += 1
            s.sleepers[s.nextID] = Sleeper(deadline: s.now.addingTimeInterval(seconds))
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                let outcome: Result<Void, Error>? = state.withLock { s in
                    guard var sleeper = s.sleepers[id] else { return .success(()) }
                    if sleeper.cancelled {
                        s.sleepers[id] = nil
                        return .failure(CancellationError())
                    }
                    if sleeper.deadline <= s.now {
                        s.sleepers[id] = nil
                        return .success(())
                    }
                    sleeper.continuation = continuation
                    s.sleepers[id] = sleeper
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, Error>? = state.withLock { s in
                guard var sleeper = s.sleepers[id] else { return nil }
                if let continuation = sleeper.continuation {
                    s.sleepers[id] = nil
                    return continuation
                }
                sleeper.cancelled = true
                s.sleepers[id] = sleeper
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }
}
