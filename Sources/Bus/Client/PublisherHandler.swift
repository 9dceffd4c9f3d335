import CZeroMQ

/// An event waiting for the publisher socket.
enum OutboundEvent: Sendable {
    /// Frames encoded by the caller (`busctl replay`).
    case frames(Frames)
    /// An event from `BusClient.publish`: its meta frame is written when it is sent, from the
    /// fixed fields and the client's shared encoding of the string fields.
    case event(topic: [UInt8], flags: EventMeta.Flags, seq: UInt64, timestampMicros: UInt64, metaTail: [UInt8], payload: [UInt8])
}

/// The process's publishing socket towards the kernel's XSUB. It is an XPUB, not a PUB:
/// - it sees the kernel's subscribe-all arrive: a PUB silently drops what is published before
///   its peer's subscription reaches it (the slow-joiner problem), so events are held until
///   the kernel has subscribed, then sent in order;
/// - with `ZMQ_XPUB_NODROP` a full pipe to the kernel is `EAGAIN`, not a silent drop: events
///   wait here (the loop polls for writability) and publishers wait for room (flow control).
final class PublisherHandler: IOHandler {
    let socket: ZMQSocket
    private var live = false
    private var held: [OutboundEvent] = []
    /// The meta frame being sent, reused from event to event.
    private var meta: [UInt8] = []
    private var heldStart = 0
    private(set) var dropped: UInt64 = 0
    private var flushWaiters: [(deadline: MonotonicTime, done: @Sendable (Bool) -> Void)] = []

    init(loop: IOLoop) throws(ZMQError) {
        socket = try loop.connect(.xpub, to: loop.endpoints.eventsIn, tuning: .default)
        do {
            try socket.set(ZMQ_XPUB_NODROP, 1)
        } catch {
            loop.release(socket)
            socket.close()
            throw error
        }
    }

    /// Events waiting for the kernel's subscription or for room in the pipe.
    var isHolding: Bool { heldStart < held.count }
    /// Waiting for room: the loop should poll for writability.
    var isBlocked: Bool { live && isHolding }

    func publish(_ batch: [OutboundEvent], loop: IOLoop) {
        if isHolding || !live {
            held.append(contentsOf: batch)
            if live { flush(loop) }
            return
        }
        var sent = 0
        for (index, frames) in batch.enumerated() {
            switch send(frames, loop: loop) {
            case .sent, .failed:
                sent += 1
            case .full:
                held.append(contentsOf: batch[index...])
                loop.thread.published(sent)
                return
            }
        }
        loop.thread.published(sent)
    }

    private enum Outcome { case sent, full, failed }

    private func send(_ event: OutboundEvent, loop: IOLoop) -> Outcome {
        do {
            switch event {
            case .frames(let frames):
                return try socket.send(frames) ? .sent : .full
            case .event(let topic, let flags, let seq, let time, let tail, let payload):
                EventMeta.write(flags: flags, seq: seq, timestampMicros: time, tail: tail, to: &meta)
                return try socket.send(topic, meta, payload) ? .sent : .full
            }
        } catch {
            dropped += 1
            loop.logger.error("publish failed", metadata: ["error": error.description])
            return .failed
        }
    }

    private func flush(_ loop: IOLoop) {
        var sent = 0
        while heldStart < held.count {
            if send(held[heldStart], loop: loop) == .full { break }
            heldStart += 1
            sent += 1
        }
        if heldStart == held.count {
            held.removeAll(keepingCapacity: true)
            heldStart = 0
        } else if heldStart > 4096 {
            held.removeFirst(heldStart)
            heldStart = 0
        }
        loop.thread.published(sent)
        if !isHolding { notifyFlushed(true) }
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

    func readable(_ loop: IOLoop) {
        while let frames = try? socket.receive() {
            // [0x01 prefix] subscribe / [0x00 prefix] unsubscribe, from the kernel's XSUB.
            guard let frame = frames.first, let first = frame.first else { continue }
            if first == 1 && !live {
                live = true
                flush(loop)
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
            loop.logger.warning("closing with \(held.count - heldStart) event(s) never sent: the kernel never subscribed or never took them")
            loop.thread.published(held.count - heldStart)
        }
        socket.close()
    }
}
