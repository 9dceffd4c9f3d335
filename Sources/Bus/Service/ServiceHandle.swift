import BusSupport
import BusWire
import BusZMQ
import Foundation

/// A service being served on a bus connection: its worker connections and the tasks that
/// run its handlers.
public final class ServiceHandle: Sendable {
    public let service: BusService
    let client: BusClient
    private let workers = Locked<[ObjectIdentifier]>([])
    private let consumers = Locked<[Task<Void, Never>]>([])
    private let counters = Locked((inFlight: 0, handled: 0))

    init(service: BusService, client: BusClient) {
        self.service = service
        self.client = client
    }

    /// Requests being handled now.
    public var inFlight: Int { counters.withLock { $0.inFlight } }
    /// Requests answered so far.
    public var handled: Int { counters.withLock { $0.handled } }

    func start() throws(BusError) {
        let metadata = WorkerInfo(
            instance: client.instance, version: client.options.version,
            host: ProcessInfo.processInfo.hostName, pid: Int(ProcessInfo.processInfo.processIdentifier),
            credit: service.pipeline, oneFrame: true, binaryMeta: true)
        let metadataBytes = (try? JSONEncoder.bus.encode(metadata)).map(Array.init) ?? []
        let io = client.io
        let logger = client.logger
        for _ in 0..<service.concurrency {
            let requests = RequestQueue()
            let accepted = io.submit { [self] loop in
                do throws(ZMQError) {
                    let worker = try WorkerHandler(
                        loop: loop, service: service.name, metadata: metadataBytes, heartbeat: client.options.heartbeat,
                        liveness: client.options.liveness, answerNow: service.execution == .ioThread ? answerNow : nil,
                        answerInPlace: service.execution == .ioThread ? answerInPlace : nil,
                        sink: { requests.push($0) })
                    loop.add(worker)
                    workers.withLock { $0.append(ObjectIdentifier(worker)) }
                } catch {
                    logger.error("cannot open a worker for \(service.name)", metadata: ["error": error.description])
                    requests.finish()
                }
            }
            guard accepted else { throw .closed }
            let executor: (any TaskExecutor)? = service.execution == .ioThread ? io : nil
            let task = Task(executorPreference: executor) { [self] in
                while let (batch, _) = await requests.take() {
                    for request in batch {
                        counters.withLock { $0.inFlight += 1 }
                        let prepared =
                            request.prepared
                            ?? service.prepare(request.frames, from: request.bodyStart, received: request.received, instance: client.instance)
                        let reply = await service.run(prepared, instance: client.instance, logger: logger)
                        // Each request is answered in its own form (one frame and binary meta from
                        // Bus clients).
                        let encoding = reply.encoding(answering: request.frames, from: request.bodyStart)
                        io.submit { loop in
                            (loop.handlers[request.worker] as? WorkerHandler)?.reply(loop, client: request.client, body: encoding)
                        }
                        counters.withLock {
                            $0.inFlight -= 1
                            $0.handled += 1
                        }
                    }
                }
            }
            consumers.withLock { $0.append(task) }
        }
        client.logger.info(
            "serving \(service.name)",
            metadata: [
                "workers": String(service.concurrency), "methods": service.methods.joined(separator: ","),
            ])
    }

    /// On the I/O thread, as the request is read: the reply's frames when its handler never
    /// suspends (or no handler runs at all); else nil, with the request decoded for the task.
    @Sendable private func answerNow(_ request: inout WorkerRequest) -> ReplyEncoding? {
        let prepared = service.prepare(request.frames, from: request.bodyStart, received: request.received, instance: client.instance)
        guard let reply = service.runNow(prepared, instance: client.instance, logger: client.logger) else {
            request.prepared = prepared
            return nil
        }
        counters.withLock { $0.handled += 1 }
        return reply.encoding(answering: request.frames, from: request.bodyStart)
    }

    /// ``answerNow(_:)`` for a one-frame request decoded in place (`binaryID`: its meta, and
    /// so the reply's, is binary, with this id).
    @Sendable private func answerInPlace(_ request: RequestBody, binaryID: UInt64?, received: MonotonicTime) -> InPlaceAnswer {
        let prepared = service.prepare(request, received: received, instance: client.instance)
        guard let reply = service.runNow(prepared, instance: client.instance, logger: client.logger) else { return .later(prepared) }
        counters.withLock { $0.handled += 1 }
        // The reply's meta has the request's id (`BusService` copies it): in binary meta it goes
        // as the number it was read as, not parsed back from its text. Otherwise JSON meta (or a
        // `from` too long for binary meta), or three frames for a status out of the form's range.
        if let binaryID, let encoding = OneFrameEncoding(reply, binaryID: binaryID) { return .reply(.oneFrame(encoding)) }
        if let encoding = OneFrameEncoding(reply, binaryMeta: false) { return .reply(.oneFrame(encoding)) }
        return .reply(.frames(reply.encode(oneFrame: true, binaryMeta: binaryID != nil)))
    }

    /// Leaves the bus gracefully: each worker sends DISCONNECT, answers every request the
    /// kernel already gave it, and waits for the kernel's acknowledgement; at most `timeout`.
    public func drain(timeout: Duration = .milliseconds(1500)) async {
        let ids = workers.withLock { $0 }
        let io = client.io
        let done = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = Once(continuation)
            let remaining = Countdown(ids.count) { once.resume(true) }
            if ids.isEmpty { return }
            Task {
                try? await Task.sleep(for: timeout)
                once.resume(false)
            }
            let accepted = io.submit { loop in
                for id in ids {
                    if let worker = loop.handlers[id] as? WorkerHandler {
                        worker.drain(loop, done: remaining.countDown)
                    } else {
                        remaining.countDown()
                    }
                }
            }
            if !accepted { once.resume(true) }
        }
        if !done {
            client.logger.warning("\(service.name): drain timed out with \(inFlight) request(s) in flight")
        }
        io.submit { loop in
            for id in ids { if let worker = loop.handlers[id] { loop.remove(worker) } }
        }
        for task in consumers.withLock({ $0 }) { task.cancel() }
    }
}

extension BusClient {
    /// Registers `service` with the kernel (MDP READY on ``BusService/concurrency`` worker
    /// connections) and starts answering its requests.
    /// - Throws: ``BusError/closed`` when the client is closed.
    public func serve(_ service: BusService) throws(BusError) -> ServiceHandle {
        let handle = ServiceHandle(service: service, client: self)
        try handle.start()
        return handle
    }
}

/// Resumes a continuation once, whoever asks first.
final class Once<T: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<T, Never>?>
    init(_ continuation: CheckedContinuation<T, Never>) { self.continuation = Locked(continuation) }
    func resume(_ value: T) {
        continuation.withLock { c in
            c?.resume(returning: value)
            c = nil
        }
    }
}

/// Calls `action` when counted down to zero (at once for zero).
final class Countdown: Sendable {
    private let remaining: Locked<Int>
    private let action: @Sendable () -> Void
    init(_ count: Int, action: @escaping @Sendable () -> Void) {
        remaining = Locked(count)
        self.action = action
        if count == 0 { action() }
    }
    @Sendable func countDown() {
        let fire = remaining.withLock { n -> Bool in
            n -= 1
            return n == 0
        }
        if fire { action() }
    }
}
