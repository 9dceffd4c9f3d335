import Bus
import Foundation

/// The time and the way to wait: the real clock, or a manual one tests advance.
public struct AuthClock: Sendable {
    public var now: @Sendable () -> Date
    public var sleep: @Sendable (Duration) async throws -> Void

    public init(now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    public static let live = AuthClock(now: { Date() }, sleep: { try await Task.sleep(for: $0) })

    /// A clock that moves only when `clock.advance(by:)` is called.
    public static func manual(_ clock: ManualClock) -> AuthClock {
        AuthClock(now: { clock.now }, sleep: { try await clock.sleep(for: $0) })
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
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
    }

    private let state: Locked<State>

    public init(now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Locked(State(now: now))
    }

    public var now: Date { state.withLock { $0.now } }

    /// How many tasks are sleeping on this clock.
    public var sleepers: Int { state.withLock { $0.sleepers.values.filter { $0.continuation != nil }.count } }

    /// The earliest deadline among the sleepers.
    public var nextDeadline: Date? { state.withLock { $0.sleepers.values.filter { $0.continuation != nil }.map(\.deadline).min() } }

    public func advance(by duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let due: [CheckedContinuation<Void, Error>] = state.withLock { s in
            s.now = s.now.addingTimeInterval(seconds)
            var due: [CheckedContinuation<Void, Error>] = []
            for (id, sleeper) in s.sleepers where sleeper.deadline <= s.now {
                if let continuation = sleeper.continuation { due.append(continuation) }
                s.sleepers[id] = nil
            }
            return due
        }
        for continuation in due { continuation.resume() }
    }

    func sleep(for duration: Duration) async throws {
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
