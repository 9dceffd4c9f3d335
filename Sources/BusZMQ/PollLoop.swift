import BusSupport
import CZeroMQ

/// A socket served by a ``PollLoop``. `Owner` is the state of the thread that runs the loop (the
/// kernel's, or a client's I/O loop), handed to every call so a handler needs no reference
/// back to it.
package protocol PollHandler<Owner>: PolledHandler {
    associatedtype Owner: AnyObject
    /// True while the handler wants its socket's messages left queued (backpressure): the socket
    /// keeps its place in the poll set but is not watched for readability. Asked every turn.
    func pausesReading(_ owner: Owner) -> Bool
    /// The socket has messages.
    func readable(_ owner: Owner)
    /// The socket's descriptor fired in the last poll: libzmq queued it a command (a message,
    /// or room in a full pipe), whatever its events say now. Called after ``readable(_:)``.
    func fired(_ owner: Owner)
    /// Called before every poll; returns when the handler next wants to be called (nil: no
    /// timer). The poll waits no longer than the earliest of these.
    func tick(_ owner: Owner, now: MonotonicTime) -> MonotonicTime?
}

extension PollHandler {
    package func pausesReading(_ owner: Owner) -> Bool { false }
    package func fired(_ owner: Owner) {}

    // The loop's calls, each with its owner cast back (the loop only ever hands a handler the
    // owner of the loop it was added to).
    package func pausesReading(owner: AnyObject) -> Bool { pausesReading(unsafeDowncast(owner, to: Owner.self)) }
    package func readable(owner: AnyObject) { readable(unsafeDowncast(owner, to: Owner.self)) }
    package func fired(owner: AnyObject) { fired(unsafeDowncast(owner, to: Owner.self)) }
    package func tick(owner: AnyObject, now: MonotonicTime) -> MonotonicTime? {
        tick(unsafeDowncast(owner, to: Owner.self), now: now)
    }
}

/// What ``PollLoop`` calls: a ``PollHandler`` with its owner type erased, so the loop keeps
/// its handlers in an array whose element type is not generic. An array of
/// `any PollHandler<Owner>` in the generic, unspecialized loop looks its element's metadata up
/// in the runtime's cache on every read. Implemented by ``PollHandler``'s extension; a handler
/// implements ``PollHandler`` only. Only ``PollLoop`` calls these: each casts its `owner`
/// unchecked (in a release build) to the handler's `Owner`.
package protocol PolledHandler: AnyObject {
    /// The socket polled for this handler, read again whenever the poll set is rebuilt
    /// (``PollLoop/socketsChanged()``).
    var socket: ZMQSocket { get }
    func pausesReading(owner: AnyObject) -> Bool
    func readable(owner: AnyObject)
    func fired(owner: AnyObject)
    func tick(owner: AnyObject, now: MonotonicTime) -> MonotonicTime?
}

/// The event loop of a thread that owns ZeroMQ sockets: the kernel's serving thread and every
/// client's I/O thread run one. Each turn it ticks its handlers, polls their sockets and a
/// wake-up descriptor once (waiting until the earliest tick asks, at most `longestWait`), and
/// hands each ready socket to its handler, in the order the handlers were added. A failed poll
/// takes one path for everyone: a terminated context ends the loop, anything else is logged
/// and the loop goes on.
package final class PollLoop<Owner: AnyObject> {
    // The loop is used by its one thread. A handler it calls may add or remove handlers, which
    // changes `handlers` and `dirty`; no access to those is open then (the turn calls handlers
    // over `polled`, which only `rebuild` changes, and reads `dirty` only between calls). The
    // accesses that last a call (the poller's `poll`, `add` and `watchReadable`) call only
    // libzmq and the sockets, never a handler. So the run-time exclusivity checks of these
    // fields, read and changed every turn, can never fire, and they are turned off.
    /// The handlers, in the order they were added; each is a `PollHandler<Owner>` (``add(_:)``).
    @exclusivity(unchecked) package private(set) var handlers: [any PolledHandler] = []
    private let wakeFD: Int32?
    private let longestWait: Int64
    private let logger: Logger
    @exclusivity(unchecked) private var poller = ZMQPoller()
    @exclusivity(unchecked) private var polled: [any PolledHandler] = []
    /// Each polled handler's socket when the set was built (a handler may replace its own).
    @exclusivity(unchecked) private var polledSockets: [ZMQSocket] = []
    @exclusivity(unchecked) private var watching: [Bool] = []
    @exclusivity(unchecked) private var dirty = true
    /// The poller's first item is the wake-up descriptor, when there is one.
    private let first: Int

    /// - Parameters:
    ///   - wakeFD: a descriptor other threads make readable to wake the loop (``WakeUp``); the
    ///     owner drains it when ``turn(_:immediate:)`` says it was.
    ///   - longestWait: the longest a poll waits when no handler asked for an earlier tick.
    package init(wakeFD: Int32?, longestWait: Duration, logger: Logger) {
        self.wakeFD = wakeFD
        self.longestWait = max(0, longestWait.nanosecondsClamped)
        self.logger = logger
        first = wakeFD == nil ? 0 : 1
    }

    /// Adds a handler (again: no effect) at the end of the order.
    package func add(_ handler: any PollHandler<Owner>) {
        guard !handlers.contains(where: { $0 === handler }) else { return }
        handlers.append(handler)
        dirty = true
    }

    /// Removes a handler; it is not called again. Closing its socket is the owner's business.
    package func remove(_ handler: AnyObject) {
        guard let index = handlers.firstIndex(where: { $0 === handler }) else { return }
        handlers.remove(at: index)
        dirty = true
    }

    package func removeAll() {
        handlers.removeAll()
        dirty = true
    }

    /// A handler replaced its socket: the poll set is rebuilt before the next poll.
    package func socketsChanged() { dirty = true }

    /// One turn: ticks every handler, polls, then calls the ready handlers. The poll does not
    /// wait when `immediate` (asked after the ticks, which may queue the owner work) says so.
    /// Returns whether the wake-up descriptor was readable, or nil when the context was
    /// terminated (the loop must end).
    package func turn(_ owner: Owner, immediate: () -> Bool = { false }) -> Bool? {
        if dirty { rebuild() }
        let now = MonotonicTime.now
        var next = now.advanced(by: longestWait)
        // Ticks and reads run over the poll set as it was built: a handler may add or remove
        // handlers, which changes the set only at the next `rebuild`. The lists hold
        // `any PolledHandler`, whose type does not depend on `Owner`, and the owner goes to the
        // handlers as `AnyObject`: this class is generic and not specialized across modules, so
        // a list whose element type depends on `Owner` would have its metadata looked up at run
        // time on every read.
        let owner = owner as AnyObject
        for index in 0..<polled.count {
            let handler = polled[index]
            guard isCurrent(handler) else { continue }
            if let wanted = handler.tick(owner: owner, now: now), wanted < next { next = wanted }
        }
        // A tick that changed the set (a re-bound socket, a reconnect) polls the new one, without
        // waiting: the handlers it added were not ticked.
        let changed = dirty
        if changed { rebuild() }
        // After the ticks: a tick may pause or resume a handler's reading.
        for index in 0..<polled.count {
            let watch = !polled[index].pausesReading(owner: owner)
            if watch != watching[index] {
                watching[index] = watch
                poller.watchReadable(first + index, watch)
            }
        }
        let hasWork = immediate()
        // Rounded up: a poll that returns before the tick it waits for is a turn for nothing.
        let waitMs = hasWork || changed || next <= now ? 0 : Int((next.nanoseconds(since: now) + 999_999) / 1_000_000)
        do {
            _ = try poller.poll(timeoutMs: waitMs)
        } catch {
            if error.isTerminated { return nil }
            // What the poll found ready before it failed is not handed to anyone: ask again.
            for index in 0..<polledSockets.count { polledSockets[index].needsEventCheck = true }
            // Not woken, as far as the owner knows: the wake-up descriptor stays readable
            // (level-triggered) and the next poll returns at once.
            logger.error("poll failed", metadata: ["error": error.description])
            return false
        }
        let woken = wakeFD != nil && poller.isReadable(0)
        for index in 0..<polled.count {
            let handler = polled[index]
            if poller.isReadable(first + index) {
                // Found ready but not read: asked again, whoever polls the socket next.
                if isCurrent(handler) { handler.readable(owner: owner) } else { polledSockets[index].needsEventCheck = true }
            }
            if poller.fired(first + index), isCurrent(handler) { handler.fired(owner: owner) }
        }
        return woken
    }

    /// False for a handler removed since the poll set was built (an earlier handler's call
    /// removed it, and may have closed its socket): it is not called again.
    @inline(__always)
    private func isCurrent(_ handler: any PolledHandler) -> Bool {
        !dirty || handlers.contains { $0 === handler }
    }

    private func rebuild() {
        let previous = (handlers: polled, sockets: polledSockets, watching: watching)
        poller.removeAll()
        if let wakeFD { poller.add(fd: wakeFD) }
        polled = handlers
        polledSockets.removeAll(keepingCapacity: true)
        watching.removeAll(keepingCapacity: true)
        for handler in polled {
            let socket = handler.socket
            poller.add(socket)
            polledSockets.append(socket)
            watching.append(true)
            // A socket the old set polled for the same handler and watched is known to this
            // set as it was: every ready one was handed to its handler, or marked when skipped.
            // Any other (new, or handed to another handler, or not watched while paused) may
            // hold what no edge will announce: ask it before the first wait.
            let kept = previous.sockets.indices.contains {
                previous.sockets[$0] === socket && previous.handlers[$0] === handler && previous.watching[$0]
            }
            if !kept { socket.needsEventCheck = true }
        }
        dirty = false
    }
}
