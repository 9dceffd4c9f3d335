import CZeroMQ
import Foundation
import Synchronization

/// The one thread of a process that owns its ZeroMQ sockets. Actors hand it work through a
/// lock-guarded queue and an eventfd-style wake-up; it polls every socket it owns and hands
/// inbound messages to sinks (which feed bounded `AsyncStream`s). No blocking ZeroMQ call runs
/// on Swift's cooperative pool.
final class IOThread: Sendable {
    typealias Operation = @Sendable (IOLoop) -> Void

    struct Queue {
        var operations: [Operation] = []
        var publishes: [Frames] = []
        var stopping = false
        var stopped = false
        var onStopped: [@Sendable () -> Void] = []
    }

    let context: ZMQContext
    let endpoints: Endpoints
    let logger: Logger
    private let wake = WakeUp()
    private let queue = Mutex(Queue())

    init(endpoints: Endpoints, logger: Logger, name: String) {
        self.context = ZMQContext(ioThreads: 1)
        self.endpoints = endpoints
        self.logger = logger
        let thread = Thread { [self] in
            let loop = IOLoop(thread: self)
            loop.run()
        }
        thread.name = "bus.io.\(name)"
        thread.start()
    }

    /// Runs `operation` on the I/O thread. Returns false when the thread has stopped.
    @discardableResult
    func submit(_ operation: @escaping Operation) -> Bool {
        let accepted = queue.withLock { q -> Bool in
            guard !q.stopping else { return false }
            q.operations.append(operation)
            return true
        }
        if accepted { wake.signal() }
        return accepted
    }

    /// Queues an event for the PUB socket. Wakes the thread only when the queue was empty, so
    /// a burst of publishes costs one wake-up.
    func publish(_ frames: Frames) -> Bool {
        let (accepted, wasEmpty) = queue.withLock { q -> (Bool, Bool) in
            guard !q.stopping else { return (false, false) }
            q.publishes.append(frames)
            return (true, q.publishes.count == 1)
        }
        if wasEmpty { wake.signal() }
        return accepted
    }

    /// Stops the thread after the queued work; `completion` runs once every socket is closed
    /// and the context terminated.
    func stop(_ completion: @escaping @Sendable () -> Void) {
        let runNow = queue.withLock { q -> Bool in
            if q.stopped { return true }
            q.stopping = true
            q.onStopped.append(completion)
            return false
        }
        if runNow { completion() } else { wake.signal() }
    }

    /// Stops and waits for the thread to finish.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            stop { continuation.resume() }
        }
    }

    // MARK: used by the loop

    var wakeFD: Int32 { wake.fd }

    func takeWork() -> (operations: [Operation], publishes: [Frames], stopping: Bool) {
        wake.drain()
        return queue.withLock { q in
            defer {
                q.operations.removeAll(keepingCapacity: true)
                q.publishes.removeAll(keepingCapacity: true)
            }
            return (q.operations, q.publishes, q.stopping)
        }
    }

    func finished() {
        context.terminate()
        wake.close()
        let callbacks = queue.withLock { q -> [@Sendable () -> Void] in
            q.stopped = true
            defer { q.onStopped.removeAll() }
            return q.onStopped
        }
        for callback in callbacks { callback() }
    }
}

/// Something on the I/O thread that owns a socket.
protocol IOHandler: AnyObject {
    var socket: ZMQSocket { get }
    /// The socket has messages.
    func readable(_ loop: IOLoop)
    /// Time passed; returns when it wants the next tick (nil: no timer).
    func tick(_ loop: IOLoop, now: ContinuousClock.Instant) -> ContinuousClock.Instant?
    /// Closes the socket (the loop is stopping or the handler is removed).
    func close(_ loop: IOLoop)
}

/// The thread-confined state of an ``IOThread``: its sockets and handlers.
final class IOLoop {
    unowned let thread: IOThread
    private(set) var handlers: [ObjectIdentifier: IOHandler] = [:]
    private var order: [ObjectIdentifier] = []
    private var pollDirty = true
    private var publisher: PublisherHandler?
    private var subscriber: SubscriberHandler?
    private var requester: RequesterHandler?
    var logger: Logger { thread.logger }
    var context: ZMQContext { thread.context }
    var endpoints: Endpoints { thread.endpoints }
    var publishDrops: UInt64 = 0

    init(thread: IOThread) {
        self.thread = thread
    }

    func add(_ handler: IOHandler) {
        let id = ObjectIdentifier(handler)
        if handlers[id] == nil { order.append(id) }
        handlers[id] = handler
        pollDirty = true
    }

    func remove(_ handler: IOHandler) {
        let id = ObjectIdentifier(handler)
        guard handlers.removeValue(forKey: id) != nil else { return }
        order.removeAll { $0 == id }
        handler.close(self)
        pollDirty = true
    }

    /// The process's SUB socket, opened on first use.
    func subscriberHandler() throws(ZMQError) -> SubscriberHandler {
        if let subscriber { return subscriber }
        let handler = try SubscriberHandler(loop: self)
        subscriber = handler
        add(handler)
        return handler
    }

    /// The process's request DEALER, opened on first use.
    func requesterHandler() throws(ZMQError) -> RequesterHandler {
        if let requester { return requester }
        let handler = try RequesterHandler(loop: self)
        requester = handler
        add(handler)
        return handler
    }

    /// Marks the poll set stale (a handler replaced its socket).
    func socketsChanged() { pollDirty = true }

    /// The process's publishing socket, opened on first use.
    func publisherHandler() throws(ZMQError) -> PublisherHandler {
        if let publisher { return publisher }
        let handler = try PublisherHandler(loop: self)
        publisher = handler
        add(handler)
        return handler
    }

    private func sendPublishes(_ batch: [Frames]) {
        do {
            try publisherHandler().enqueue(batch, loop: self)
        } catch {
            logger.error("cannot open the publisher socket", metadata: ["error": error.description])
            publishDrops += UInt64(batch.count)
        }
    }

    func run() {
        var poller = ZMQPoller()
        var pollOrder: [ObjectIdentifier] = []
        var stopping = false
        while true {
            let work = thread.takeWork()
            for operation in work.operations { operation(self) }
            if !work.publishes.isEmpty { sendPublishes(work.publishes) }
            if work.stopping { stopping = true }
            if stopping { break }

            if pollDirty {
                poller.removeAll()
                poller.add(fd: thread.wakeFD)
                pollOrder = order
                for id in pollOrder { poller.add(handlers[id]!.socket) }
                pollDirty = false
            }
            let now = ContinuousClock.now
            var next = now + .milliseconds(500)
            for id in pollOrder {
                if let wanted = handlers[id]?.tick(self, now: now), wanted < next { next = wanted }
            }
            let waitMs = next <= now ? 0 : Int(Broker.milliseconds(next - now)) + 1
            do {
                _ = try poller.poll(timeoutMs: waitMs)
            } catch {
                if error.isTerminated { break }
                logger.error("poll failed", metadata: ["error": error.description])
                continue
            }
            for (index, id) in pollOrder.enumerated() where poller.isReadable(index + 1) {
                handlers[id]?.readable(self)
            }
        }
        // Flush what was queued before the stop, then close everything.
        let rest = thread.takeWork()
        for operation in rest.operations { operation(self) }
        if !rest.publishes.isEmpty { sendPublishes(rest.publishes) }
        for id in order { handlers[id]?.close(self) }
        handlers.removeAll()
        thread.finished()
    }
}
