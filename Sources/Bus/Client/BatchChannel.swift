import BusSupport

/// A bounded hand-off from the I/O thread to one consumer task, in batches: the I/O thread
/// appends everything it read in one go under one lock, and the consumer takes the whole batch
/// at once and then iterates it without synchronisation. An `AsyncStream` element costs a lock
/// and often a task wake-up per element (and its unspecialised generic code looks up type
/// metadata each time); this costs them per batch. Events reach subscriptions through it
/// (``EventChannel``), requests reach a service's handlers through it.
final class BatchChannel<Element: Sendable>: Sendable {
    struct State {
        var buffer: [Element] = []
        var waiter: CheckedContinuation<Void, Never>?
        var finished = false
        /// What was lost to drops because the consumer fell `capacity` behind (``loss`` of each
        /// dropped element), not yet reported.
        var dropped: UInt64 = 0
        /// Runs once the consumer next takes (the producer waits for room).
        var onRoom: (@Sendable () -> Void)?
    }

    let capacity: Int
    /// Whether a full buffer makes the producer wait (``BusOptions/subscriberGrace``) instead
    /// of dropping at once. A channel that does not hold its producer keeps the newest elements.
    let holdsProducer: Bool
    private let state = Locked(State())
    private let onCancel: @Sendable () -> Void
    /// What dropping an element loses: itself, and for an event also the events already
    /// missing before it (its `missed`), which the next delivered event then reports.
    private let loss: @Sendable (Element) -> UInt64

    /// - Parameters:
    ///   - capacity: elements held before some are dropped (and counted); `push` says which.
    ///   - holdsProducer: see ``holdsProducer``.
    ///   - onCancel: runs when the consumer's task is cancelled while taking.
    ///   - loss: what dropping an element loses (see ``loss``); one by default.
    init(
        capacity: Int = .max, holdsProducer: Bool = true, onCancel: @escaping @Sendable () -> Void = {},
        loss: @escaping @Sendable (Element) -> UInt64 = { _ in 1 }
    ) {
        self.capacity = max(1, capacity)
        self.holdsProducer = holdsProducer
        self.onCancel = onCancel
        self.loss = loss
    }

    /// Appends a batch (the I/O thread). What does not fit is dropped and counted: the newest
    /// elements when the producer holds for room (it stopped reading, so what it dropped comes
    /// after what is queued), the oldest otherwise (a channel that keeps the newest values, so
    /// the last element pushed is always delivered and the count sits on the first element
    /// after the loss).
    func push(_ batch: [Element]) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.finished else { return nil }
            let room = capacity - s.buffer.count
            if s.buffer.isEmpty && room >= batch.count {
                // Shared, not copied: the consumer took everything before.
                s.buffer = batch
            } else if room >= batch.count {
                s.buffer.append(contentsOf: batch)
            } else if holdsProducer {
                if room > 0 { s.buffer.append(contentsOf: batch.prefix(room)) }
                s.dropped += lost(batch.dropFirst(max(0, room)))
            } else {
                keepNewest(&s, appending: batch)
            }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Appends `batch` and drops the oldest elements beyond `capacity`, counting them.
    private func keepNewest<C: Collection<Element>>(_ s: inout State, appending batch: C) {
        let overflow = s.buffer.count + batch.count - capacity
        guard overflow > 0 else {
            s.buffer.append(contentsOf: batch)
            return
        }
        if overflow >= s.buffer.count {
            s.dropped += lost(s.buffer) + lost(batch.prefix(overflow - s.buffer.count))
            s.buffer = Array(batch.suffix(capacity))
        } else {
            s.dropped += lost(s.buffer.prefix(overflow))
            s.buffer.removeFirst(overflow)
            s.buffer.append(contentsOf: batch)
        }
    }

    private func lost<S: Sequence<Element>>(_ dropped: S) -> UInt64 {
        dropped.reduce(0) { $0 + loss($1) }
    }

    /// Elements that fit before the next push drops some (`Int.max` once finished).
    var room: Int {
        state.withLock { $0.finished ? .max : capacity - $0.buffer.count }
    }

    /// Full, and the producer is to wait for room rather than drop.
    var blocksProducer: Bool { holdsProducer && room <= 0 }

    /// Calls `action` once there is room: at once when there is, else when the consumer next
    /// takes (or the channel finishes). One waiting action at a time; a new one replaces it.
    func whenRoom(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.finished || s.buffer.count < capacity { return true }
            s.onRoom = action
            return false
        }
        if now { action() }
    }

    /// Appends one element (the I/O thread).
    func push(_ element: Element) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.finished else { return nil }
            if s.buffer.count < capacity {
                s.buffer.append(element)
            } else if holdsProducer {
                s.dropped += loss(element)
            } else {
                keepNewest(&s, appending: CollectionOfOne(element))
            }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// No more elements: the consumer gets what is queued, then nil.
    func finish() {
        let (waiter, onRoom) = state.withLock { s -> (CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?) in
            s.finished = true
            defer {
                s.waiter = nil
                s.onRoom = nil
            }
            return (s.waiter, s.onRoom)
        }
        waiter?.resume()
        onRoom?()
    }

    /// Every element queued, oldest first, and how many were dropped before them; waits while
    /// there is none. Nil once finished and drained, or when the task is cancelled (which also
    /// finishes the channel and calls `onCancel`).
    func take() async -> (batch: [Element], dropped: UInt64)? {
        while true {
            if Task.isCancelled {
                finish()
                onCancel()
                return nil
            }
            // Swapped out, not copied: `removeAll(keepingCapacity:)` on the buffer just handed
            // out would allocate a new one as large as the biggest batch on every take.
            let (batch, finished, dropped, onRoom) = state.withLock { s -> ([Element], Bool, UInt64, (@Sendable () -> Void)?) in
                let taken = (s.buffer, s.finished, s.dropped, s.buffer.isEmpty ? nil : s.onRoom)
                s.buffer = []
                s.dropped = 0
                if taken.3 != nil { s.onRoom = nil }
                return taken
            }
            onRoom?()
            if !batch.isEmpty { return (batch, dropped) }
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

/// One subscription's events.
typealias EventChannel = BatchChannel<BusEvent>

extension BatchChannel where Element == BusEvent {
    /// The next batch of events; events dropped before it (the consumer fell behind) are
    /// reported on its first event as `missed`.
    func nextEvents() async -> [BusEvent]? {
        guard case (var batch, let dropped)? = await take() else { return nil }
        if dropped > 0 { batch[0].missed += dropped }
        return batch
    }
}

/// The requests of one worker connection, bounded by the kernel (which sends a worker at most
/// its `credit` of unanswered requests).
typealias RequestQueue = BatchChannel<WorkerRequest>
