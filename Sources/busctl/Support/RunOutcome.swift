import Bus
import Foundation

/// How a long-running command's main loop ended.
enum RunOutcome<T: Sendable>: Sendable {
    case finished(T)
    /// SIGINT or SIGTERM arrived.
    case interrupted
    /// The time limit passed.
    case timedOut
}

/// Runs `body` until it returns, the `timeout` passes, or SIGINT/SIGTERM arrives; in the
/// last two cases `body` is cancelled (and awaited) before this returns, so it can finish
/// what it wrote.
func runUntilInterrupted<T: Sendable>(timeout: Duration? = nil, _ body: @escaping @Sendable () async throws -> T) async throws -> RunOutcome<T> {
    return try await withThrowingTaskGroup(of: RunOutcome<T>.self) { group in
        group.addTask { .finished(try await body()) }
        group.addTask {
            // Made here, not outside: the watcher is not Sendable. Until it runs (a moment),
            // SIGINT has its default action, which is fine for a command that just started.
            let signals = SignalWatcher([SIGINT, SIGTERM])
            _ = await signals.next()
            return Task.isCancelled ? .finished(try await neverReturns()) : .interrupted
        }
        if let timeout {
            group.addTask {
                try await Task.sleep(for: timeout)
                return .timedOut
            }
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

/// Throws `CancellationError`: a cancelled waiter's result that is never used.
private func neverReturns<T>() async throws -> T { throw CancellationError() }
