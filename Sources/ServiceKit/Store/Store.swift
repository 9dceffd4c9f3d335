import Bus
import Foundation

/// The actor shell around a ``Feature``: takes one action at a time, performs the effects,
/// publishes every state topic whose value changed (retained, with the causation id), answers
/// requests, and runs the timers the state wants.
///
/// Order within one action: the reducer; the middleware (a refusal undoes the action); the
/// effects' cancellations, work and `sync` steps, in order; then the changed state topics, the
/// change events and the replies, queued for the bus in that order.
public actor Store<F: Feature> {
    /// The current state.
    public private(set) var state: F.State
    let feature: F
    let middleware: [Middleware<F>]
    let ports: StorePorts
    let clock: ServiceClock
    let logger: Logger
    private var tracker: StateTopicTracker<F.State>
    private var waiters: [RequestID: CheckedContinuation<Result<[UInt8], ServiceError>, Never>] = [:]
    private var watchdogs: [RequestID: Task<Void, Never>] = [:]
    private var nextRequest = 1
    private var runs: [Int: RunEntry] = [:]
    private var nextToken = 1
    private var timers: [EffectID: TimerEntry] = [:]
    /// Counts every timer started, so a firing of a timer that was replaced is never taken
    /// for one of its successor (even one with the same id).
    private var timerGeneration = 0
    private var counters = StoreStats()
    private var stopped = false
    private let outbox: AsyncStream<Outgoing>.Continuation
    private let outboxStream: AsyncStream<Outgoing>
    private var publisher: Task<Void, Never>?
    private let publishFailures = Locked(0)

    private struct RunEntry {
        var id: EffectID?
        var name: String
        var task: Task<Void, Never>
    }

    private struct TimerEntry {
        var interval: Duration
        var generation: Int
        var task: Task<Void, Never>
    }

    private enum Outgoing: Sendable {
        case publish(topic: String, payload: [UInt8], retain: Bool, cause: Cause)
        case reply(CheckedContinuation<Result<[UInt8], ServiceError>, Never>, Result<[UInt8], ServiceError>)
    }

    /// - Parameters:
    ///   - feature: the reducer and its dependencies.
    ///   - initialState: the state before any restore.
    ///   - stateTopics: the retained topics that show the state.
    ///   - middleware: run after the reducer for every action, in order.
    ///   - ports: the bus (``StorePorts/bus(_:restoreDeadline:)``).
    ///   - clock: drives the timers.
    ///   - logger: for effect failures, refusals and publish errors.
    public init(
        _ feature: F, initialState: F.State, stateTopics: [StateTopic<F.State>] = [], middleware: [Middleware<F>] = [],
        ports: StorePorts, clock: ServiceClock = .live, logger: Logger
    ) {
        self.feature = feature
        self.state = initialState
        self.middleware = middleware
        self.ports = ports
        self.clock = clock
        self.logger = logger
        tracker = StateTopicTracker(topics: stateTopics)
        (outboxStream, outbox) = AsyncStream<Outgoing>.makeStream(bufferingPolicy: .unbounded)
    }

    // MARK: start and stop

    /// Restores every state topic that restores (a family after the state that lists its keys
    /// was restored), before the service serves anything. A restored value counts as published:
    /// only a topic whose value differs from what was saved is published again at start.
    /// - Throws: ``StoreError/restoreFailed(topic:reason:)`` when a saved value cannot be read
    ///   back: the service must not start and overwrite it with an empty state.
    public func restore() async throws(StoreError) {
        var restored: [(topic: StateTopic<F.State>, name: String, bytes: [UInt8])] = []
        for topic in tracker.topics where topic.restores {
            for name in topic.restoreTopics(state) {
                let bytes: [UInt8]?
                do {
                    bytes = try await ports.restore(name)
                } catch {
                    throw .restoreFailed(topic: name, reason: "\(error)")
                }
                guard let bytes else { continue }
                restored.append((topic, name, bytes))
                // A removed family member was published as null; a plain topic's null is a value.
                if topic.isFamily, bytes == removedValue { continue }
                do {
                    try topic.apply(&state, name, Data(bytes))
                } catch {
                    throw .restoreFailed(topic: name, reason: "the saved value does not decode: \(error)")
                }
            }
        }
        // What the bus holds: the restored state's own encoding of each saved value (so a
        // saved value written with other formatting is not published again), or null.
        for (topic, name, bytes) in restored {
            if bytes != removedValue, case .success(let projected)? = topic.project(state)[name] {
                tracker.markPublished(name, projected)
            } else {
                tracker.markPublished(name, bytes)
            }
        }
    }

    /// Starts the outbox, sends `action` first if given (the seeds' `launched`), then publishes
    /// every state topic not yet on the bus (a new service's initial value, a topic that is not
    /// restored) and starts the timers the state wants.
    public func start(with action: F.Action? = nil) {
        guard publisher == nil else { return }
        let stream = outboxStream
        let ports = self.ports
        let logger = self.logger
        let failures = publishFailures
        publisher = Task.detached {
            for await item in stream {
                switch item {
                case .publish(let topic, let payload, let retain, let cause):
                    do {
                        try await ports.publish(topic, payload, retain, cause)
                    } catch {
                        failures.withLock { $0 += 1 }
                        logger.error("could not publish \(topic)", metadata: ["error": "\(error)"])
                    }
                case .reply(let continuation, let result):
                    continuation.resume(returning: result)
                }
            }
        }
        let cause = Cause(kind: .start, id: "start")
        if let action {
            handle(action, cause: cause)
        } else {
            publishChanges(cause: cause)
            reconcileTimers()
        }
    }

    /// Publishes every state topic's current value again, each with the next sequence number:
    /// the kernel came back after a restart and may hold older values (refilled from `persist`)
    /// than this store, or none. Without this, a change acknowledged just before the kernel
    /// died and never committed by `persist` would live only here, and be lost at this
    /// service's next restart (``BusClient/onKernelReturn(_:)``).
    public func republishAll() {
        guard publisher != nil, !stopped else { return }
        let cause = Cause(kind: .start, id: "kernel-return")
        for (topic, payload) in tracker.published.sorted(by: { $0.key < $1.key }) {
            counters.statePublishes += 1
            outbox.yield(.publish(topic: topic, payload: payload, retain: true, cause: cause))
        }
    }

    /// Stops the timers and the running effects, answers waiting requests with 503, and
    /// flushes what was queued for the bus.
    public func shutdown() async {
        guard !stopped else { return }
        stopped = true
        for entry in runs.values { entry.task.cancel() }
        runs = [:]
        for entry in timers.values { entry.task.cancel() }
        timers = [:]
        for (_, waiter) in waiters { outbox.yield(.reply(waiter, .failure(Self.interrupted))) }
        waiters = [:]
        for watchdog in watchdogs.values { watchdog.cancel() }
        watchdogs = [:]
        outbox.finish()
        await publisher?.value
    }

    /// The answer to a request the reducer had taken when the service stopped: unlike 503
    /// `shutting_down` (refused before anything happened), its outcome is unknown, so a caller
    /// must not simply retry a write that is not idempotent.
    static var interrupted: ServiceError {
        ServiceError(
            503, "interrupted", "the service stopped while handling the request; it may or may not have taken effect")
    }

    /// Answers every request still waiting for the reducer with 503 `interrupted` and leaves
    /// the store running: a stopping process calls it just before its drain runs out of time,
    /// so those callers get an answer instead of a timeout (their effects may still finish and
    /// publish).
    public func answerWaiting() {
        for (id, waiter) in waiters {
            watchdogs.removeValue(forKey: id)?.cancel()
            outbox.yield(.reply(waiter, .failure(Self.interrupted)))
        }
        waiters = [:]
        counters.requestsWaiting = 0
    }

    // MARK: inputs

    /// Sends an action that is not a request (an observed event, a test).
    public func send(_ action: F.Action, cause: Cause) {
        handle(action, cause: cause)
    }

    /// Sends the action `make` builds for a new request id and waits until the reducer answers
    /// it (``Effect/reply(_:_:)`` or ``Effect/fail(_:_:)``), at most `timeout` (then 504).
    public func request(
        id: String? = nil, correlationID: String? = nil, timeout: Duration = .seconds(30), _ make: @Sendable (RequestID) -> F.Action
    ) async -> Result<[UInt8], ServiceError> {
        guard !stopped else { return .failure(ServiceError(503, "shutting_down", "the service is stopping")) }
        guard publisher != nil else { return .failure(ServiceError(503, "starting", "the service has not started yet")) }
        let requestID = RequestID(nextRequest)
        nextRequest += 1
        let cause = Cause(kind: .request, id: id ?? "request-\(requestID.value)", correlationID: correlationID ?? "", request: requestID)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[UInt8], ServiceError>, Never>) in
            waiters[requestID] = continuation
            counters.requestsWaiting = waiters.count
            watchdogs[requestID] = Task { [weak self] in
                do {
                    try await Task.sleep(for: timeout)
                } catch {
                    return
                }
                await self?.expire(requestID, after: timeout)
            }
            handle(make(requestID), cause: cause)
        }
        counters.requests += 1
        if case .failure = result { counters.requestErrors += 1 }
        return result
    }

    /// The counters (the `stats` method).
    public func stats() -> StoreStats {
        var out = counters
        out.effectsInFlight = runs.count
        out.timers = timers.count
        out.requestsWaiting = waiters.count
        out.publishFailures = publishFailures.value
        return out
    }

    // MARK: the step

    private func handle(_ action: F.Action, cause: Cause) {
        guard !stopped else { return }
        let outcome = Reduction.apply(feature, middleware: middleware, state: &state, action: action, cause: cause)
        counters.actions += 1
        switch outcome {
        case .refused(let error, let by, let record):
            count(record)
            counters.refused += 1
            logger.warning("\(by) refused \(record.name)", metadata: ["cause": cause.description, "error": error.description])
            if let request = cause.request { answer(request, .failure(error)) }
        case .applied(let effect, let record):
            count(record)
            perform(effect, cause: cause, stateChanged: record.before != record.after)
        }
    }

    private func count(_ record: ActionRecord<F>) {
        let micros = record.duration.microseconds
        counters.reducerMicros += micros
        counters.slowestReducerMicros = max(counters.slowestReducerMicros, micros)
        counters.byAction[record.name, default: 0] += 1
    }

    private func perform(_ effect: Effect<F.Action>, cause: Cause, stateChanged: Bool) {
        var events: [(String, [UInt8])] = []
        var replies: [(RequestID, Result<[UInt8], ServiceError>)] = []
        for operation in effect.operations {
            switch operation {
            case .run(let run): start(run, cause: cause)
            case .cancel(let id): cancel(id)
            case .sync(_, let work): work()
            case .publish(let topic, .success(let payload)): events.append((topic, payload))
            case .publish(let topic, .failure(let error)):
                logger.error("could not publish \(topic)", metadata: ["error": error.description])
                publishFailures.withLock { $0 += 1 }
            case .reply(let id, let result): replies.append((id, result))
            }
        }
        // An action that left the state as it was cannot change a projection: no encoding.
        if stateChanged { publishChanges(cause: cause) }
        for (topic, payload) in events {
            counters.eventPublishes += 1
            outbox.yield(.publish(topic: topic, payload: payload, retain: false, cause: cause))
        }
        for (id, result) in replies { answer(id, result) }
        reconcileTimers()
    }

    private func publishChanges(cause: Cause) {
        let (publishes, errors) = tracker.changes(in: state)
        for error in errors {
            publishFailures.withLock { $0 += 1 }
            logger.error("a state topic was not published", metadata: ["error": error.description])
        }
        for (topic, payload) in publishes {
            counters.statePublishes += 1
            outbox.yield(.publish(topic: topic, payload: payload, retain: true, cause: cause))
        }
    }

    private func answer(_ id: RequestID, _ result: Result<[UInt8], ServiceError>) {
        watchdogs.removeValue(forKey: id)?.cancel()
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        outbox.yield(.reply(waiter, result))
    }

    private func expire(_ id: RequestID, after timeout: Duration) {
        watchdogs[id] = nil
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        logger.warning("a request got no answer from the reducer", metadata: ["request": id.description, "timeout": "\(timeout)"])
        waiter.resume(returning: .failure(ServiceError(504, "timeout", "the service did not answer within \(timeout)")))
    }

    // MARK: effects

    private func start(_ run: Effect<F.Action>.Run, cause: Cause) {
        if let id = run.id, run.cancelInFlight { cancel(id) }
        let token = nextToken
        nextToken += 1
        counters.effectsStarted += 1
        let send = Send<F.Action> { [weak self] action in await self?.deliver(action, cause: cause, token: token) }
        let task = Task { [weak self] in
            switch await run.execute(send) {
            case .finished, .cancelled: break
            case .action(let action): await send(action)
            case .failed(let reason): await self?.effectFailed(run.name, reason)
            }
            await self?.finished(token)
        }
        runs[token] = RunEntry(id: run.id, name: run.name, task: task)
    }

    private func deliver(_ action: F.Action, cause: Cause, token: Int) {
        guard runs[token] != nil else { return }
        handle(action, cause: cause)
    }

    private func finished(_ token: Int) { runs[token] = nil }

    private func effectFailed(_ name: String, _ reason: String) {
        counters.effectsFailed += 1
        logger.error("effect \(name) failed", metadata: ["error": reason])
    }

    private func cancel(_ id: EffectID) {
        for (token, entry) in runs where entry.id == id {
            entry.task.cancel()
            runs[token] = nil
        }
    }

    private func reconcileTimers() {
        guard !stopped else { return }
        let wanted = feature.timers(for: state)
        var ids = Set<EffectID>()
        for timer in wanted {
            ids.insert(timer.id)
            if let running = timers[timer.id], running.interval == timer.interval { continue }
            timers[timer.id]?.task.cancel()
            timerGeneration += 1
            let generation = timerGeneration
            let clock = self.clock
            let action = timer.action
            let id = timer.id
            let interval = timer.interval
            let task = Task { [weak self] in
                while !Task.isCancelled {
                    do {
                        try await clock.sleep(interval)
                    } catch {
                        return
                    }
                    guard let self else { return }
                    await self.timerFired(id, generation: generation, action: action)
                }
            }
            timers[timer.id] = TimerEntry(interval: timer.interval, generation: generation, task: task)
        }
        for (id, entry) in timers where !ids.contains(id) {
            entry.task.cancel()
            timers[id] = nil
        }
    }

    private func timerFired(_ id: EffectID, generation: Int, action: F.Action) {
        guard timers[id]?.generation == generation else { return }
        handle(action, cause: Cause(kind: .timer, id: id.name))
    }
}

/// Why a store could not start.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A saved state value could not be read back; starting empty would overwrite it.
    case restoreFailed(topic: String, reason: String)

    public var description: String {
        switch self {
        case .restoreFailed(let topic, let reason): return "could not restore \(topic): \(reason)"
        }
    }
}
