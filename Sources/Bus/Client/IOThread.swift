import BusSupport
import BusWire
import BusZMQ
import CZeroMQ
import Foundation
import Synchronization

/// The one thread of a process that owns its ZeroMQ sockets. Actors hand it work through a
/// lock-guarded queue and an eventfd-style wake-up; it polls every socket it owns and hands
/// inbound messages to bounded hand-offs (`BatchChannel`s of events and of worker requests). No blocking ZeroMQ call runs
/// on Swift's cooperative pool.
///
/// It is also a `TaskExecutor`: a task that prefers it (`Task(executorPreference:)`, see
/// ``BusClient/taskExecutor``) runs its jobs on this thread between two polls, so a reply or an
/// event resumes it without a hop to another thread, and what it sends is on the socket's thread
/// already. Such code must not block: it holds up every socket of the client while it runs.
final class IOThread: TaskExecutor, Sendable {
    typealias Operation = @Sendable (IOLoop) -> Void

    struct Queue {
        var operations: [Operation] = []
        /// Events published and not yet taken by the loop.
        var publishes = PackedEvents()
        /// An emptied buffer the loop gave back, to be the next `publishes`.
        var spare: PackedEvents?
        /// Jobs of tasks that prefer this thread as their executor.
        var jobs: [UnownedJob] = []
        /// Events published and not yet handed to libzmq (queued here or held by the
        /// publisher socket): what flow control bounds.
        var backlog = 0
        /// Set by the loop while the publisher socket is full: queued publishes are then not
        /// work (the loop waits for the socket, not for them) and send no wake-up.
        var holdPublishes = false
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        var stopping = false
        var stopped = false
        var onStopped: [@Sendable () -> Void] = []
    }

    let context: ZMQContext
    let endpoints: Endpoints
    let logger: Logger
    let security: ClientSecurity?
    /// The process's name for its threads (`bus.io.<name>`, `bus.dns.<name>`).
    let name: String
    /// See ``BusOptions/subscriberGrace``.
    let subscriberGrace: Duration
    /// Called on this thread when the kernel subscribes to the publisher again after it had
    /// gone (``BusClient/onKernelReturn(_:)``).
    let kernelReturnHandlers = Locked<[@Sendable () -> Void]>([])
    private let wake = WakeUp()
    private let queue = Locked(Queue())
    /// The I/O thread's `pthread_t`, once it runs: work queued by the thread itself needs no
    /// wake-up (the loop looks at the queue before it polls).
    private let threadID = Atomic<UInt>(0)

    /// True on the I/O thread itself.
    var isCurrent: Bool { pthread_equal(pthread_self(), threadID.load(ordering: .acquiring)) != 0 }

    init(endpoints: Endpoints, logger: Logger, name: String, security: ClientSecurity? = nil, subscriberGrace: Duration = .milliseconds(100)) {
        self.context = ZMQContext(ioThreads: 1)
        self.endpoints = endpoints
        self.logger = logger
        self.security = security
        self.name = name
        self.subscriberGrace = subscriberGrace
        Thread.startNamed("bus.io.\(name)") { [self] in
            threadID.store(UInt(pthread_self()), ordering: .releasing)
            let loop = IOLoop(thread: self)
            loop.run()
        }
    }

    /// Runs `operation` on the I/O thread. Returns false when the thread has stopped.
    @discardableResult
    func submit(_ operation: @escaping Operation) -> Bool {
        let (accepted, wake) = queue.withLock { q -> (Bool, Bool) in
            guard !q.stopping else { return (false, false) }
            q.operations.append(operation)
            // One wake-up per batch: a non-empty queue already has one pending (held publishes
            // sent none).
            return (true, q.operations.count == 1 && q.jobs.isEmpty && (q.publishes.isEmpty || q.holdPublishes))
        }
        if wake, !isCurrent { self.wake.signal() }
        return accepted
    }

    /// Runs `job` on this thread at its next turn. After the thread stopped, jobs run on
    /// Dispatch's global queue instead, so a task that prefers this executor still finishes.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (stopped, wake) = queue.withLock { q -> (Bool, Bool) in
            guard !q.stopped else { return (true, false) }
            q.jobs.append(job)
            return (false, q.jobs.count == 1 && q.operations.isEmpty && (q.publishes.isEmpty || q.holdPublishes))
        }
        if stopped {
            let executor = asUnownedTaskExecutor()
            DispatchQueue.global().async { job.runSynchronously(on: executor) }
        } else if wake, !isCurrent {
            self.wake.signal()
        }
    }

    /// Flow control: publishers wait while more than `highWater` events are in the backlog,
    /// until it is down to `lowWater`.
    /// Small enough that a backlog stays in the CPU caches.
    static let highWater = 10_000
    static let lowWater = 5_000

    /// Queues an event for the publisher socket (its frames are copied, see ``PackedEvents``).
    /// Wakes the thread only when the queue was empty, so a burst of publishes costs one
    /// wake-up. Returns nil when stopped, else the backlog (see ``waitForRoom()``).
    func publish(
        topic: [UInt8], flags: EventMeta.Flags, seq: UInt64, timestampMicros: UInt64, metaTail: [UInt8], payload: [UInt8]
    ) -> Int? {
        queuePublish {
            $0.append(topic: topic, flags: flags, seq: seq, timestampMicros: timestampMicros, metaTail: metaTail, payload: payload)
        }
    }

    /// Queues an event already encoded as frames; like the other `publish`.
    func publish(frames: Frames) -> Int? {
        queuePublish { $0.append(frames: frames) }
    }

    @inline(__always)
    private func queuePublish(_ append: (PackedEvents) -> Void) -> Int? {
        let (backlog, wasEmpty) = queue.withLock { q -> (Int?, Bool) in
            guard !q.stopping else { return (nil, false) }
            append(q.publishes)
            q.backlog += 1
            return (q.backlog, q.publishes.count == 1 && q.operations.isEmpty && q.jobs.isEmpty && !q.holdPublishes)
        }
        if wasEmpty, !isCurrent { wake.signal() }
        return backlog
    }

    /// Buffers above this size are not kept for reuse.
    static let spareLimit = 8 << 20

    /// The loop sent everything in `events`: it becomes the next buffer publishes fill, so a
    /// steady stream allocates none.
    func recycle(_ events: PackedEvents) {
        guard events.capacity <= Self.spareLimit else { return }
        events.removeAll()
        queue.withLock { q in
            if q.spare == nil { q.spare = events }
        }
    }

    /// Suspends until the backlog is down to ``lowWater`` (or the thread stops).
    func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = queue.withLock { q -> Bool in
                if q.backlog <= Self.lowWater || q.stopped { return true }
                q.roomWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The I/O thread handed `count` events to libzmq (or dropped them).
    func published(_ count: Int) {
        guard count > 0 else { return }
        let waiters = queue.withLock { q -> [CheckedContinuation<Void, Never>] in
            q.backlog -= count
            guard q.backlog <= Self.lowWater, !q.roomWaiters.isEmpty else { return [] }
            defer { q.roomWaiters.removeAll() }
            return q.roomWaiters
        }
        for waiter in waiters { waiter.resume() }
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

    func takeWork(drain: Bool = true) -> (operations: [Operation], publishes: PackedEvents?, jobs: [UnownedJob], stopping: Bool) {
        var operations: [Operation] = []
        var jobs: [UnownedJob] = []
        let (publishes, stopping) = takeWork(drain: drain, operations: &operations, jobs: &jobs)
        return (operations, publishes, jobs, stopping)
    }

    /// Takes the queued work: the operations and jobs are swapped with `operations` and `jobs`,
    /// which the loop hands in empty, so the emptied buffers of its last turn take the next
    /// turn's work without an allocation.
    func takeWork(drain: Bool, operations: inout [Operation], jobs: inout [UnownedJob]) -> (publishes: PackedEvents?, stopping: Bool) {
        if drain { wake.drain() }
        // Swapped out, not copied: `removeAll(keepingCapacity:)` on a buffer the caller still
        // holds would allocate a new one as large as the biggest batch on every turn.
        return queue.withLock { q in
            var publishes: PackedEvents?
            if !q.publishes.isEmpty {
                publishes = q.publishes
                q.publishes = q.spare ?? PackedEvents()
                q.spare = nil
            }
            swap(&q.operations, &operations)
            swap(&q.jobs, &jobs)
            return (publishes, q.stopping)
        }
    }

    /// Buffers of queued work above this many entries are not kept for reuse.
    static let workSpareLimit = 1024

    /// True when work is queued (the loop then polls without waiting). With
    /// `holdingPublishes` (the publisher socket is full) queued publishes do not count, and
    /// publishes queued from then on send no wake-up until the loop asks again without it: the
    /// loop retries the socket on its own (``PublisherHandler/tick(_:now:)``).
    func hasWork(holdingPublishes: Bool) -> Bool {
        queue.withLock { q in
            q.holdPublishes = holdingPublishes
            return !q.operations.isEmpty || (!q.publishes.isEmpty && !holdingPublishes) || !q.jobs.isEmpty || q.stopping
        }
    }

    /// Runs jobs on this thread (the loop calls it between polls).
    func run(_ jobs: [UnownedJob]) {
        guard !jobs.isEmpty else { return }
        let executor = asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: executor) }
    }

    func finished() {
        context.terminate()
        wake.close()
        let (callbacks, waiters, jobs) = queue.withLock { q -> ([@Sendable () -> Void], [CheckedContinuation<Void, Never>], [UnownedJob]) in
            q.stopped = true
            defer {
                q.onStopped.removeAll()
                q.roomWaiters.removeAll()
                q.jobs.removeAll()
            }
            return (q.onStopped, q.roomWaiters, q.jobs)
        }
        run(jobs)
        for waiter in waiters { waiter.resume() }
        for callback in callbacks { callback() }
    }
}

/// Something on the I/O thread that owns a socket: polled by the loop's ``PollLoop``.
protocol IOHandler: PollHandler where Owner == IOLoop {
    /// Closes the socket (the loop is stopping or the handler is removed).
    func close(_ loop: IOLoop)
}

/// The thread-confined state of an ``IOThread``: its sockets and handlers.
final class IOLoop {
    unowned let thread: IOThread
    /// The handlers by identity, for operations that find theirs again.
    private(set) var handlers: [ObjectIdentifier: any IOHandler] = [:]
    /// Polls the handlers' sockets, in the order they were added.
    private let sockets: PollLoop<IOLoop>
    private var publisher: PublisherHandler?
    private var subscriber: SubscriberHandler?
    private var requester: RequesterHandler?
    var logger: Logger { thread.logger }
    var context: ZMQContext { thread.context }
    var endpoints: Endpoints { thread.endpoints }
    var publishDrops: UInt64 = 0
    private var monitors: [ObjectIdentifier: MonitorHandler] = [:]
    /// What went wrong in the last CURVE handshake, until one succeeds.
    var handshakeProblem: String?
    /// The sockets connected (or waiting to connect) towards a host name, by socket.
    private var named: [ObjectIdentifier: NamedLink] = [:]
    /// What the lookups of each host name found.
    private var hosts: [String: HostState] = [:]

    /// A socket towards a host name: the address it was handed (nil until the name resolved).
    private final class NamedLink {
        let socket: ZMQSocket
        let endpoint: NamedTCPEndpoint
        let monitor: MonitorHandler
        var address: String?
        /// Set by the socket's owner (``IOLoop/whenMoved(_:_:)``): what libzmq still queued on
        /// the old address is gone after a move.
        var moved: (() -> Void)?

        init(socket: ZMQSocket, endpoint: NamedTCPEndpoint, monitor: MonitorHandler) {
            self.socket = socket
            self.endpoint = endpoint
            self.monitor = monitor
        }

        /// Connects to `address`, after ending the connection to the one before, if any.
        func connect(to address: String) throws(ZMQError) {
            if let old = self.address {
                try socket.disconnect(endpoint.endpoint(address: old))
                self.address = nil
            }
            try socket.connect(endpoint.endpoint(address: address))
            self.address = address
        }
    }

    private struct HostState {
        /// The address sockets towards this name are handed (the last lookup's first answer,
        /// or the address before it when that is still among the answers).
        var address: String?
        /// Lookups started and not answered.
        var inFlight = 0
        var lastLookup: MonotonicTime?
        /// Why the last lookup failed.
        var failure: LookupFailure?
    }

    /// A lookup unanswered this long (an NSS module that hangs; glibc's own DNS client gives up
    /// after `timeout × attempts`) no longer holds the next one back, up to this many at once.
    static let lookUpAbandonedAfterNanos: Int64 = 30_000_000_000
    static let maxLookupsInFlight = 3

    /// A socket towards a host name that has had no connection this long has the name looked up
    /// again (no more often than that per name): about two of libzmq's reconnect intervals at
    /// their cap (``SocketTuning/reconnectIntervalMaxMs``), so a kernel that restarts at its
    /// address is reconnected to before, and one that moved (a container with a new address)
    /// is found a few seconds after.
    static let lookUpAgainAfterNanos: Int64 = 4_000_000_000

    /// Why a socket towards `endpoint` cannot reach the kernel, when known: a failed handshake,
    /// or a host name that resolved to no address yet.
    func connectionProblem(_ endpoint: String) -> String? {
        if let handshakeProblem { return handshakeProblem }
        guard let host = NamedTCPEndpoint(endpoint)?.host, let state = hosts[host], state.address == nil else { return nil }
        if let failure = state.failure { return failure.description }
        return state.inFlight > 0 ? "cannot resolve '\(host)': the resolver has not answered yet" : nil
    }

    init(thread: IOThread) {
        self.thread = thread
        sockets = PollLoop(wakeFD: thread.wakeFD, longestWait: .milliseconds(500), logger: thread.logger)
    }

    func add<Handler: IOHandler>(_ handler: Handler) {
        handlers[ObjectIdentifier(handler)] = handler
        sockets.add(handler)
    }

    func remove(_ handler: any IOHandler) {
        guard handlers.removeValue(forKey: ObjectIdentifier(handler)) != nil else { return }
        sockets.remove(handler)
        handler.close(self)
    }

    /// Opens a socket towards the kernel: tuned, with CURVE when security is on (and then a
    /// monitor that turns a failed handshake into a clear error instead of a silent hang).
    /// Towards a host name, the socket is handed the address the name resolved to, looked up
    /// outside libzmq (``NamedTCPEndpoint``); before the first lookup has answered, it connects
    /// when it does, and what it sends meanwhile waits (or, on a DEALER, is refused: `EAGAIN`).
    func connect(_ type: ZMQSocketType, to endpoint: String, tuning: SocketTuning) throws(ZMQError) -> ZMQSocket {
        try open(type, to: endpoint, tuning: tuning, watched: thread.security != nil)
    }

    /// Opens a socket as ``connect(_:to:tuning:)`` does, always with a monitor: it tells
    /// whether the socket has a connection.
    func connectWatched(_ type: ZMQSocketType, to endpoint: String, tuning: SocketTuning) throws(ZMQError) -> (ZMQSocket, MonitorHandler) {
        let socket = try open(type, to: endpoint, tuning: tuning, watched: true)
        guard let monitor = monitors[ObjectIdentifier(socket)] else { preconditionFailure("a watched socket has a monitor") }
        return (socket, monitor)
    }

    private func open(_ type: ZMQSocketType, to endpoint: String, tuning: SocketTuning, watched: Bool) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context, type, tuning: tuning)
        let name = NamedTCPEndpoint(endpoint)
        do {
            if let security = thread.security {
                try socket.makeCurveClient(security.keyPair, serverKey: security.serverKey)
            }
            // Every socket towards a name is watched: one left without a connection has the name
            // looked up again.
            if watched || name != nil {
                let monitor = try MonitorHandler(loop: self, target: socket, host: name?.host)
                monitors[ObjectIdentifier(socket)] = monitor
                add(monitor)
                if let name {
                    let link = NamedLink(socket: socket, endpoint: name, monitor: monitor)
                    named[ObjectIdentifier(socket)] = link
                    if let address = hosts[name.host]?.address {
                        try link.connect(to: address)
                    } else {
                        _ = lookUpIfDue(name.host, now: .now)
                    }
                }
            }
            if name == nil { try socket.connect(endpoint) }
        } catch {
            release(socket)
            socket.close()
            throw error
        }
        return socket
    }

    /// Stops monitoring a socket that is about to be closed.
    func release(_ socket: ZMQSocket) {
        named[ObjectIdentifier(socket)] = nil
        if let monitor = monitors.removeValue(forKey: ObjectIdentifier(socket)) { remove(monitor) }
    }

    /// Calls `action` when `socket` (opened by ``connect(_:to:tuning:)``) is moved to another
    /// address of its host name: what libzmq still queued for the old one is gone.
    func whenMoved(_ socket: ZMQSocket, _ action: @escaping () -> Void) {
        named[ObjectIdentifier(socket)]?.moved = action
    }

    /// Starts a lookup of `host` unless one runs (for less than ``lookUpAbandonedAfterNanos``)
    /// or the last one started less than ``lookUpAgainAfterNanos`` ago; returns when to ask
    /// again.
    func lookUpIfDue(_ host: String, now: MonotonicTime) -> MonotonicTime {
        var state = hosts[host] ?? HostState()
        if let last = state.lastLookup {
            let running = state.inFlight > 0 && (now < last.advanced(by: Self.lookUpAbandonedAfterNanos) || state.inFlight >= Self.maxLookupsInFlight)
            if running || now < last.advanced(by: Self.lookUpAgainAfterNanos) {
                return max(now, last).advanced(by: Self.lookUpAgainAfterNanos)
            }
        }
        state.inFlight += 1
        state.lastLookup = now
        hosts[host] = state
        let thread = self.thread
        HostLookup.start(host, name: thread.name) { result in
            thread.submit { loop in loop.lookedUp(host, result) }
        }
        return now.advanced(by: Self.lookUpAgainAfterNanos)
    }

    /// A lookup of `host` answered: sockets still waiting for an address connect to it, and a
    /// socket without a connection whose address is no longer among the answers moves to the
    /// new one (the kernel restarted elsewhere). A socket with a connection keeps it. A failed
    /// lookup leaves every socket on the address it has.
    private func lookedUp(_ host: String, _ result: Result<[String], LookupFailure>) {
        var state = hosts[host] ?? HostState()
        state.inFlight = max(0, state.inFlight - 1)
        defer { hosts[host] = state }
        let addresses: [String]
        switch result {
        case .failure(let failure):
            if state.failure != failure {
                logger.error(
                    "\(failure)\(state.address.map { "; sockets stay on \($0)" } ?? "; sockets wait until it resolves")")
            }
            state.failure = failure
            return
        case .success(let found):
            addresses = found
        }
        if state.failure != nil { logger.notice("'\(host)' resolves again", metadata: ["addresses": addresses.joined(separator: ",")]) }
        state.failure = nil
        let chosen = state.address.flatMap { addresses.contains($0) ? $0 : nil } ?? addresses[0]
        if let old = state.address, old != chosen { logger.notice("'\(host)' moved from \(old) to \(chosen)") }
        state.address = chosen
        for link in named.values where link.endpoint.host == host && link.address != chosen && !link.monitor.isConnected {
            let moving = link.address != nil
            // Not while its owner has messages to read from it: ending a pipe libzmq has read a
            // frame ahead of (`ZMQ_EVENTS` on a SUB) aborts the process. The next lookup moves it.
            if moving, let events = try? link.socket.events() {
                // The ask may have taken the edge the poll would have woken on.
                link.socket.needsEventCheck = true
                if events & Int16(ZMQ_POLLIN) != 0 { continue }
            }
            do throws(ZMQError) {
                try link.connect(to: chosen)
            } catch {
                logger.error("cannot connect to \(link.endpoint.endpoint(address: chosen))", metadata: ["error": error.description])
            }
            if moving { link.moved?() }
        }
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

    /// A subscription buffer the subscriber was waiting for has room again.
    func resumeSubscriber() { subscriber?.resume(self) }

    /// Marks the poll set stale (a handler replaced its socket).
    func socketsChanged() { sockets.socketsChanged() }

    private func sendPublishes(_ batch: PackedEvents) {
        do throws(ZMQError) {
            try publisherHandler().publish(batch, loop: self)
        } catch {
            logger.error("cannot open the publisher socket", metadata: ["error": error.description])
            publishDrops += UInt64(batch.count)
            thread.published(batch.count)
        }
    }

    /// The process's publishing socket, opened on first use.
    func publisherHandler() throws(ZMQError) -> PublisherHandler {
        if let publisher { return publisher }
        let handler = try PublisherHandler(loop: self)
        publisher = handler
        add(handler)
        return handler
    }

    func run() {
        var stopping = false
        var woken = true
        // The buffers each turn's operations and jobs are taken in, emptied and handed back.
        var operations: [IOThread.Operation] = []
        var jobs: [UnownedJob] = []
        while true {
            // The wake-up pipe is read only when the poll saw it readable: no syscall per turn.
            // Work that work queued (a job resumed by a reply queues the next send, a handler
            // queues its reply) runs in the same turn, up to a bound so sockets are not starved.
            var rounds = 0
            repeat {
                let work = thread.takeWork(drain: woken && rounds == 0, operations: &operations, jobs: &jobs)
                // Publishes before operations: a `flushPublishes` taken with them counts them
                // as published before it (they were queued first).
                if let publishes = work.publishes { sendPublishes(publishes) }
                for operation in operations { operation(self) }
                thread.run(jobs)
                operations.removeAll(keepingCapacity: operations.capacity <= IOThread.workSpareLimit)
                jobs.removeAll(keepingCapacity: jobs.capacity <= IOThread.workSpareLimit)
                if work.stopping { stopping = true }
                rounds += 1
            } while !stopping && rounds < 4 && thread.hasWork(holdingPublishes: publisher?.isBlocked ?? false)
            if stopping { break }
            // Work the thread queued for itself (no wake-up was sent for it), by the operations
            // above or by a handler's tick (a timed-out request resumes its task): do not wait.
            // While the publisher socket is full, publishes are not such work. The publisher is
            // never polled for writability (``PublisherHandler/fired(_:)`` says why).
            let turned = sockets.turn(self) { thread.hasWork(holdingPublishes: publisher?.isBlocked ?? false) }
            guard let wokenNow = turned else { break }
            woken = wokenNow
        }
        // Flush what was queued before the stop, then close everything.
        let rest = thread.takeWork()
        for operation in rest.operations { operation(self) }
        if let publishes = rest.publishes { sendPublishes(publishes) }
        thread.run(rest.jobs)
        // Events held until the kernel subscribes get a bounded chance to go out.
        if let publisher, publisher.isHolding {
            let deadline = MonotonicTime.now + .seconds(2)
            var poller = ZMQPoller()
            poller.add(publisher.socket)
            while publisher.isHolding, MonotonicTime.now < deadline {
                // Not polled for writability (see `run`): retried on a command or every 5 ms.
                if (try? poller.poll(timeoutMs: 5)) ?? 0 > 0 { publisher.readable(self) }
                if publisher.isBlocked { publisher.writable(self) }
            }
        }
        for handler in sockets.handlers where !(handler is MonitorHandler) { (handler as? any IOHandler)?.close(self) }
        for monitor in monitors.values { monitor.close(self) }
        handlers.removeAll()
        sockets.removeAll()
        thread.finished()
    }
}
