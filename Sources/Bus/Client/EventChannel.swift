/// The bounded hand-off from the I/O thread to one subscription's consumer, in batches: the
/// I/O thread appends everything it read in one go under one lock, and the consumer takes the
/// whole batch at once and then iterates it without synchronisation. An `AsyncStream` element
/// costs a lock and often a task wake-up per event; this costs them per batch.
final class EventChannel: Sendable {
    struct State {
        var buffer: [BusEvent] = []
        var waiter: CheckedContinuation<Void, Never>?
        var finished = false
        /// Events dropped because the consumer fell `capacity` behind, not yet reported.
        var dropped: UInt64 = 0
    }

    let capacity: Int
    private let state = Locked(State())
    private let onCancel: @Sendable () -> Void

    init(capacity: Int, onCancel: @escaping @Sendable () -> Void) {
        self.capacity = max(1, capacity)
        self.onCancel = onCancel
    }

    /// Appends a batch (the I/O thread). What does not fit is dropped and reported on the next
    /// event delivered, as `missed`.
    func push(_ batch: [BusEvent]) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.finished else { return nil }
            let room = capacity - s.buffer.count
            if room >= batch.count {
                s.buffer.append(contentsOf: batch)
            } else {
                if room > 0 { s.buffer.append(contentsOf: batch.prefix(room)) }
                s.dropped += UInt64(batch.count - max(0, room))
            }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// The next batch; nil once finished and drained, or when the task is cancelled.
    func take() async -> [BusEvent]? {
        while true {
            if Task.isCancelled {
                finish()
                onCancel()
                return nil
            }
            let (batch, finished, dropped) = state.withLock { s -> ([BusEvent], Bool, UInt64) in
                defer {
                    s.buffer.removeAll(keepingCapacity: true)
                    s.dropped = 0
                }
                return (s.buffer, s.finished, s.dropped)
            }
            if !batch.isEmpty {
                if dropped > 0 {
                    var first = batch
                    first[0].missed += dropped
                    return first
                }
                return batch
            }
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
