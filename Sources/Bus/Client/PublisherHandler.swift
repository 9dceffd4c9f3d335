import BusSupport
import BusZMQ
import CZeroMQ

/// The process's publishing socket towards the kernel's XSUB. It is an XPUB, not a PUB:
/// - it sees the kernel's subscribe-all arrive: a PUB silently drops what is published before
///   its peer's subscription reaches it (the slow-joiner problem), so events are held until
///   the kernel has subscribed, then sent in order;
/// - with `ZMQ_XPUB_NODROP` a full pipe to the kernel is `EAGAIN`, not a silent drop: events
///   wait here (the loop polls for writability) and publishers wait for room (flow control).
final class PublisherHandler: IOHandler {
    let socket: ZMQSocket
    private var live = false
    /// The kernel subscribed once already: a later subscription is a kernel that came back.
    private var wasLive = false
    /// Batches not sent yet, oldest first: waiting for the kernel's subscription or for room.
    private var held: [PackedEvents] = []
    /// Where sending stopped in `held.first`.
    private var cursor = PackedEvents.Cursor()
    private(set) var dropped: UInt64 = 0
    private var flushWaiters: [(deadline: MonotonicTime, done: @Sendable (Bool) -> Void)] = []

    init(loop: IOLoop) throws(ZMQError) {
        socket = try loop.connect(.xpub, to: loop.endpoints.eventsIn, tuning: .default)
        do {
            try socket.set(ZMQ_XPUB_NODROP, 1)
            // Every subscribe reaches ``readable(_:)``, also one for a subscription the socket
            // already has: a restarted kernel's subscribe comes on the same pipe (this side
            // connects, so libzmq keeps the pipe across the reconnect) and would be swallowed.
            try socket.set(ZMQ_XPUB_VERBOSE, 1)
        } catch {
            loop.release(socket)
            socket.close()
            throw error
        }
        // Moved to the kernel's new address: the old connection's subscription is gone with it.
        // Events are held until the kernel there subscribes.
        loop.whenMoved(socket) { [unowned self] in live = false }
    }

    /// Events waiting for the kernel's subscription or for room in the pipe.
    var isHolding: Bool { !held.isEmpty }
    /// Waiting for room: the loop should poll for writability.
    var isBlocked: Bool { live && isHolding }

    func publish(_ batch: PackedEvents, loop: IOLoop) {
        held.append(batch)
        if live { flush(loop) }
    }

    /// Sends held events in order until the socket is full or none is left.
    private func flush(_ loop: IOLoop) {
        var sent = 0
        // A local copy: the field, changed in place per event, cost a dynamic exclusivity check each.
        var cursor = self.cursor
        defer { self.cursor = cursor }
        while let batch = held.first {
            while !batch.isFinished(cursor) {
                do {
                    guard try batch.send(at: &cursor, on: socket) else {
                        loop.thread.published(sent)
                        return
                    }
                } catch {
                    dropped += 1
                    loop.logger.error("publish failed", metadata: ["error": error.description])
                }
                sent += 1
            }
            held.removeFirst()
            cursor = PackedEvents.Cursor()
            loop.thread.recycle(batch)
        }
        loop.thread.published(sent)
        notifyFlushed(true)
    }

    /// Calls `done(true)` once every event published so far is handed to libzmq on a connection
    /// the kernel subscribed on, or `done(false)` at the deadline.
    func whenFlushed(deadline: MonotonicTime, done: @escaping @Sendable (Bool) -> Void) {
        if live && !isHolding {
            done(true)
        } else {
            flushWaiters.append((deadline, done))
        }
    }

    private func notifyFlushed(_ flushed: Bool) {
        guard !flushWaiters.isEmpty else { return }
        let waiters = flushWaiters
        flushWaiters.removeAll()
        for waiter in waiters { waiter.done(flushed) }
    }

    func writable(_ loop: IOLoop) {
        flush(loop)
    }

    /// A command reached the socket (room in its pipe is one): the held events are tried. The
    /// socket is never polled for writability: an XPUB reports `ZMQ_POLLOUT` whether or not
    /// its pipes have room (libzmq's `dist_t::has_out` is always true), so with NODROP a full
    /// publisher polled for it would spin at full speed, taking a core from the kernel and the
    /// subscribers. It is retried here and on its tick.
    func fired(_ loop: IOLoop) {
        if isBlocked { writable(loop) }
    }

    func readable(_ loop: IOLoop) {
        while let frames = try? socket.receive() {
            // [0x01 prefix] subscribe / [0x00 prefix] unsubscribe, from the kernel's XSUB.
            guard let frame = frames.first, let first = frame.first else { continue }
            if first == 1 {
                if !live {
                    live = true
                    flush(loop)
                }
                // The kernel subscribes once per connection: a later subscribe is a kernel that
                // came back (restarted, or events-in re-bound).
                if wasLive {
                    for handler in loop.thread.kernelReturnHandlers.withLock({ $0 }) { handler() }
                }
                wasLive = true
            } else if first == 0 && frame.count == 1 && live {
                // The kernel's subscribe-all went away (its connection closed: a kernel restart,
                // or events-in re-bound): hold events again until it is back, instead of
                // letting the XPUB drop them for want of a subscriber.
                live = false
            }
        }
    }

    /// How often a full socket is retried when no command reached it. The loop does not poll
    /// it for writability (an XPUB always reports it) but retries when the socket's descriptor
    /// fires, which room in the pipe makes it do; another call on the socket can take that
    /// signal, so this bounds the wait. libzmq re-opens a full pipe when its reader has taken
    /// half of it: the other half keeps the reader busy until the retry comes.
    static let retryFull: Int64 = 1_000_000

    /// When the full socket is next retried; nil while not blocked.
    private var retryAt: MonotonicTime?

    func tick(_ loop: IOLoop, now: MonotonicTime) -> MonotonicTime? {
        if isBlocked, let retryAt, now >= retryAt { flush(loop) }
        if !isBlocked {
            retryAt = nil
        } else if retryAt == nil || now >= retryAt! {
            retryAt = now.advanced(by: Self.retryFull)
        }
        let next = retryAt
        guard !flushWaiters.isEmpty else { return next }
        let expired = flushWaiters.filter { $0.deadline <= now }
        flushWaiters.removeAll { $0.deadline <= now }
        for waiter in expired { waiter.done(false) }
        guard let deadline = flushWaiters.map(\.deadline).min() else { return next }
        return next.map { min($0, deadline) } ?? deadline
    }

    func close(_ loop: IOLoop) {
        loop.release(socket)
        notifyFlushed(!isHolding)
        if isHolding {
            let unsent = held.reduce(0) { $0 + $1.count } - cursor.event
            loop.logger.warning("closing with \(unsent) event(s) never sent: the kernel never subscribed or never took them")
            loop.thread.published(unsent)
        }
        socket.close()
    }
}
