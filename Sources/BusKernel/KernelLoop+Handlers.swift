import BusSupport
import BusZMQ

/// The kernel's sockets as handlers on its ``PollLoop``, in the order each turn serves them:
/// ZAP first (a handshake waits on it), then events in, requests, events out, and the
/// handshake monitors. Their timers run before each poll.
extension KernelLoop {
    /// Sets the handlers for the current sockets: at start, and after a socket was re-bound (a
    /// revoked key) or a monitor replaced. A socket that did not change keeps its handler, so
    /// the loop keeps what it knows of it (``PollLoop`` asks a socket again before its wait
    /// only when the set does not know it: new, under another handler, or not watched).
    func installHandlers() {
        guard let sockets else { return }
        let current = sockets.handlers
        func handler(_ socket: ZMQSocket, _ make: (ZMQSocket) -> any PollHandler<KernelLoop>) -> any PollHandler<KernelLoop> {
            (current.first { $0.socket === socket } as? any PollHandler<KernelLoop>) ?? make(socket)
        }
        sockets.removeAll()
        if let zap = guardian?.zap { sockets.add(handler(zap, ZAPHandler.init)) }
        sockets.add(handler(xsub, EventsInHandler.init))
        sockets.add(handler(router, RequestsHandler.init))
        sockets.add(handler(xpub, EventsOutHandler.init))
        for (monitor, _) in guardian?.monitors ?? [] { sockets.add(handler(monitor.socket, MonitorHandler.init)) }
    }

    /// The ROUTER of the request plane (7/MDP clients and workers). Its timer is the broker's:
    /// heartbeats, expired workers and requests, and the authorized-keys watch.
    final class RequestsHandler: PollHandler {
        let socket: ZMQSocket
        init(socket: ZMQSocket) { self.socket = socket }

        func readable(_ kernel: KernelLoop) { kernel.serveRequests(limit: 512) }

        func tick(_ kernel: KernelLoop, now: MonotonicTime) -> MonotonicTime? {
            if kernel.broker.nextDeadline(now: now) <= now { kernel.perform(kernel.broker.tick(now: now)) }
            if let change = kernel.guardian?.reloadIfChanged(now: now) { kernel.revoke(change.removed) }
            return kernel.broker.nextDeadline(now: now)
        }
    }

    /// The XSUB publishers connect to. While an event is held (a full subscriber queue refused
    /// it), it is not read, so the wait reaches publishers; the held event is retried every
    /// millisecond, and on the turn after the XPUB's descriptor fires.
    final class EventsInHandler: PollHandler {
        let socket: ZMQSocket
        init(socket: ZMQSocket) { self.socket = socket }

        func pausesReading(_ kernel: KernelLoop) -> Bool { kernel.held != nil }

        func readable(_ kernel: KernelLoop) { kernel.forwardEvents(limit: 4096, now: .now) }

        func tick(_ kernel: KernelLoop, now: MonotonicTime) -> MonotonicTime? {
            guard kernel.held != nil else { return nil }
            kernel.forwardEvents(limit: 4096, now: now)
            return kernel.held == nil ? now : now.advanced(by: 1_000_000)
        }
    }

    /// The XPUB towards subscribers: their subscriptions come in on it, and its descriptor
    /// firing means a subscriber's connection took messages from its queue. Its timer is the
    /// catch-up rounds' (``TailCatchUp``).
    final class EventsOutHandler: PollHandler {
        let socket: ZMQSocket
        init(socket: ZMQSocket) { self.socket = socket }

        func readable(_ kernel: KernelLoop) { kernel.readSubscriptions(limit: 512) }

        func fired(_ kernel: KernelLoop) { kernel.catchUp.descriptorFired() }

        func tick(_ kernel: KernelLoop, now: MonotonicTime) -> MonotonicTime? {
            // Never while holding: a repeat must not overtake the held event it may contain.
            // `isRecording` first: a stored flag, read in place, where calling `nextDue()` on
            // the loop's struct copied it (a retain and release of each of its arrays) per turn.
            guard kernel.held == nil, kernel.catchUp.isRecording else { return nil }
            if kernel.catchUp.roundDue(now: now) { kernel.sendCatchUpRound(now: now) }
            return kernel.catchUp.nextDue()
        }
    }

    /// The ZAP handler's socket (security on): libzmq asks it about every CURVE handshake.
    final class ZAPHandler: PollHandler {
        let socket: ZMQSocket
        init(socket: ZMQSocket) { self.socket = socket }
        func readable(_ kernel: KernelLoop) { kernel.guardian?.serveZAP() }
        func tick(_ kernel: KernelLoop, now: MonotonicTime) -> MonotonicTime? { nil }
    }

    /// A handshake monitor of a public socket (security on).
    final class MonitorHandler: PollHandler {
        let socket: ZMQSocket
        init(socket: ZMQSocket) { self.socket = socket }
        func readable(_ kernel: KernelLoop) { kernel.guardian?.readMonitors() }
        func tick(_ kernel: KernelLoop, now: MonotonicTime) -> MonotonicTime? { nil }
    }
}
