/// The hand-off of requests from a worker socket (the I/O thread) to the task that runs the
/// service's handlers, in batches: one lock per batch, and a wake-up only when the task waits.
/// Bounded by the kernel, which sends a worker at most its `credit` of unanswered requests.
/// (It replaced an `AsyncStream`, whose unspecialised generic code looked up type metadata on
/// every element.)
final class RequestQueue: Sendable {
    private struct State {
        var buffer: [WorkerRequest] = []
        var waiter: CheckedContinuation<Void, Never>?
        var finished = false
    }

    private let state = Locked(State())

    /// Adds a request (the I/O thread).
    func push(_ request: WorkerRequest) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.finished else { return nil }
            s.buffer.append(request)
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// No more requests: the consumer gets what is queued, then nil.
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Every request queued, oldest first; waits while there is none. Nil once finished and
    /// drained, or when the task is cancelled.
    func take() async -> [WorkerRequest]? {
        while true {
            if Task.isCancelled { return nil }
            let (batch, finished) = state.withLock { s -> ([WorkerRequest], Bool) in
                defer { s.buffer.removeAll(keepingCapacity: true) }
                return (s.buffer, s.finished)
            }
            if !batch.isEmpty { return batch }
            if finished { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { s -> Bool in
                        if !s.buffer.isEmpty || s.finished { return true }
                        s.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
                    defer { s.waiter = nil }
                    return s.waiter
                }
                waiter?.resume()
            }
        }
    }
}
