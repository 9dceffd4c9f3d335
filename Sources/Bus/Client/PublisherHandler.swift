import CZeroMQ

/// The process's publishing socket towards the kernel's XSUB.
///
/// A PUB socket silently drops what it sends before the kernel's subscription has reached it
/// (the slow-joiner problem), so a fresh process lost its first events. This is an XPUB instead:
/// it reads the kernel's subscription and holds events until one has arrived, then sends them
/// in order. `ZMQ_XPUB_NODROP` turns a full pipe into back-pressure (held and retried) rather
/// than a silent drop; only past ``maxPending`` held events are newer ones dropped and counted.
final class PublisherHandler: IOHandler {
    let socket: ZMQSocket
    /// Subscriptions the kernel holds on this socket (it sends one, for everything, per connection).
    private var subscriptions = 0
    private var pending: [Frames] = []
    private var head = 0
    private var waiters: [(deadline: ContinuousClock.Instant, done: @Sendable (Bool) -> Void)] = []
    private(set) var drops: UInt64 = 0
    private var dropping = false
    let maxPending: Int

    init(loop: IOLoop, maxPending: Int = 100_000) throws(ZMQError) {
        self.maxPending = maxPending
        socket = try ZMQSocket(loop.context, .xpub, tuning: .client)
        do {
            try socket.set(ZMQ_XPUB_NODROP, 1)
            try socket.connect(loop.endpoints.eventsIn)
        } catch {
            socket.close()
            throw error
        }
    }

    private var pendingCount: Int { pending.count - head }

    /// Queues events; they go out once the kernel has subscribed.
    func enqueue(_ batch: [Frames], loop: IOLoop) {
        for frames in batch {
            if pendingCount >= maxPending {
                drops += 1
                if !dropping {
                    dropping = true
                    loop.logger.warning("\(maxPending) events are waiting for the kernel (\(loop.endpoints.eventsIn)); newer ones are dropped")
                }
                continue
            }
            pending.append(frames)
        }
        flush(loop)
    }

    /// Calls `done(true)` once every event queued so far has been handed to a connection the
    /// kernel subscribed on, or `done(false)` at `deadline`. Checked after the next flush, so
    /// events published before the call (even in the same I/O batch) are covered.
    func whenFlushed(deadline: ContinuousClock.Instant, done: @escaping @Sendable (Bool) -> Void) {
        waiters.append((deadline, done))
    }

    private func flush(_ loop: IOLoop) {
        while subscriptions > 0, head < pending.count {
            do {
                guard try socket.send(pending[head]) else { break }
            } catch {
                drops += 1
                loop.logger.error("publish failed", metadata: ["error": error.description])
            }
            pending[head] = []
            head += 1
        }
        if head == pending.count {
            dropping = false
            pending.removeAll(keepingCapacity: pending.count < 4096)
            head = 0
        } else if head > 4096, head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
        if pendingCount == 0, !waiters.isEmpty {
            for waiter in waiters { waiter.done(true) }
            waiters.removeAll()
        }
    }

    func readable(_ loop: IOLoop) {
        for _ in 0..<64 {
            guard let frames = try? socket.receive(), let first = frames.first?.first else { break }
            if first == 1 { subscriptions += 1 } else if first == 0 { subscriptions = max(0, subscriptions - 1) }
        }
        flush(loop)
    }

    func tick(_ loop: IOLoop, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        flush(loop)
        var next: ContinuousClock.Instant?
        waiters.removeAll { waiter in
            if waiter.deadline <= now {
                waiter.done(false)
                return true
            }
            if next == nil || waiter.deadline < next! { next = waiter.deadline }
            return false
        }
        // A full pipe (NODROP) is not a poll event: retry soon while events are held.
        if subscriptions > 0, pendingCount > 0 {
            let retry = now + .milliseconds(2)
            if next == nil || retry < next! { next = retry }
        }
        return next
    }

    /// Sends what is held before closing: waits (at most 500 ms, on the closing I/O thread) for
    /// the kernel's subscription if it has not arrived yet, so "publish, then close" delivers.
    func close(_ loop: IOLoop) {
        flush(loop)
        let deadline = ContinuousClock.now + .milliseconds(500)
        var poller = ZMQPoller()
        let index = poller.add(socket)
        while pendingCount > 0, ContinuousClock.now < deadline {
            guard (try? poller.poll(timeoutMs: subscriptions > 0 ? 2 : 20)) != nil else { break }
            if poller.isReadable(index) { readable(loop) } else { flush(loop) }
        }
        if pendingCount > 0 {
            loop.logger.warning("closing with \(pendingCount) event(s) the kernel never subscribed to; dropped")
        }
        for waiter in waiters { waiter.done(false) }
        waiters.removeAll()
        socket.close()
    }
}
