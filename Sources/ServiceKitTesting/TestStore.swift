import Bus
import Foundation
import ServiceKit
import Testing

/// Drives a ``Feature`` in a test the way TCA's `TestStore` does, with no sockets and no
/// sleeps:
///
/// ```swift
/// let store = TestStore(Weather(client: .test), initialState: .init())
/// await store.send(.searchSubmitted("par")) { $0.status = .loading }
/// await store.receive(.citiesLoaded(.success([paris]))) { $0.status = .normal; $0.cities = [paris] }
/// await store.finish()
/// ```
/// It fails the test on a state change the test did not assert (the closure gets the state
/// before the action and must turn it into the state after), on an action an effect sent back
/// that the test did not `receive`, on an effect still running or a request never answered at
/// ``finish()``, and on a change event the test did not `expectPublish`. Time moves only with ``advance(by:)``.
@MainActor
public final class TestStore<F: Feature> where F.Action: Equatable {
    /// The current state.
    public private(set) var state: F.State
    /// The clock the timers sleep on (give the feature's dependencies the same one).
    public let clock: ManualClock
    let feature: F
    let middleware: [Middleware<F>]
    var tracker: StateTopicTracker<F.State>
    let topics: [StateTopic<F.State>]
    var received: [(action: F.Action, cause: Cause)] = []
    var runs: [Int: (id: EffectID?, name: String, task: Task<Void, Never>)] = [:]
    var timers: [EffectID: (interval: Duration, generation: Int, task: Task<Void, Never>)] = [:]
    var events: [(topic: String, payload: [UInt8])] = []
    var replies: [RequestID: Result<[UInt8], ServiceError>] = [:]
    var nextRequest = 1
    var nextToken = 1
    var timerGeneration = 0
    var requests: [RequestID] = []
    var answered = Set<RequestID>()
    let report: (String, SourceLocation) -> Void

    /// Every retained state-topic publish so far, in order (for tests of what the bus would see).
    public private(set) var statePublishes: [(topic: String, payload: [UInt8])] = []
    /// The last refusal by a middleware, if any.
    public private(set) var lastRefusal: ServiceError?

    /// - Parameters:
    ///   - feature: the feature, built with test dependencies.
    ///   - initialState: the state to start from.
    ///   - stateTopics: the service's state topics, to see what it would publish.
    ///   - middleware: the service's middleware (refusals behave as in the service).
    ///   - clock: the manual clock the timers use.
    ///   - reportIssue: where failures go (default: `Issue.record`).
    public init(
        _ feature: F, initialState: F.State, stateTopics: [StateTopic<F.State>] = [], middleware: [Middleware<F>] = [],
        clock: ManualClock = ManualClock(), reportIssue: ((String, SourceLocation) -> Void)? = nil
    ) {
        self.feature = feature
        self.state = initialState
        self.middleware = middleware
        self.clock = clock
        self.topics = stateTopics
        tracker = StateTopicTracker(topics: stateTopics)
        tracker.seed(initialState, onlyRestored: false)
        report = reportIssue ?? { message, location in Issue.record(Comment(rawValue: message), sourceLocation: location) }
        reconcileTimers()
    }

    // MARK: sending

    /// Sends `action` as the service's input (an observed change, a timer) and checks the state.
    public func send(
        _ action: F.Action, sourceLocation: SourceLocation = #_sourceLocation, assert expected: ((inout F.State) throws -> Void)? = nil
    ) async {
        checkNothingReceived(before: "sending \(ActionName.of(action))", sourceLocation)
        apply(action, cause: Cause(kind: .test, id: "test"), expected: expected, sourceLocation)
    }

    /// Sends the action for a new request, as a method call would, and returns its id (answer
    /// it with ``expectReply(_:_:sourceLocation:)``).
    @discardableResult
    public func send(
        request make: (RequestID) -> F.Action, sourceLocation: SourceLocation = #_sourceLocation,
        assert expected: ((inout F.State) throws -> Void)? = nil
    ) async -> RequestID {
        let id = RequestID(nextRequest)
        nextRequest += 1
        requests.append(id)
        let action = make(id)
        checkNothingReceived(before: "sending \(ActionName.of(action))", sourceLocation)
        apply(action, cause: Cause(kind: .request, id: "request-\(id.value)", request: id), expected: expected, sourceLocation)
        return id
    }

    /// Waits (up to `timeout` of real time) for the next action an effect or a timer sent back,
    /// checks it is `expected`, reduces it and checks the state.
    public func receive(
        _ expected: F.Action, timeout: Duration = .seconds(2), sourceLocation: SourceLocation = #_sourceLocation,
        assert expectedState: ((inout F.State) throws -> Void)? = nil
    ) async {
        let deadline = ContinuousClock.now + timeout
        while received.isEmpty, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        guard !received.isEmpty else {
            report("expected to receive \(expected), but no action arrived within \(timeout)", sourceLocation)
            return
        }
        let (action, cause) = received.removeFirst()
        if action != expected {
            report("received \(action)\n  but expected \(expected)", sourceLocation)
        }
        apply(action, cause: cause, expected: expectedState, sourceLocation)
    }

    /// Moves the manual clock by `duration` (one timer interval at a time), once every timer is
    /// waiting on it, and lets what wakes up run.
    public func advance(by duration: Duration, sourceLocation: SourceLocation = #_sourceLocation) async {
        let deadline = ContinuousClock.now + .seconds(2)
        while clock.sleepers < timers.count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        clock.advance(by: duration)
        for _ in 0..<10 { await Task.yield() }
    }

    // MARK: outputs

    /// Checks that request `id` was answered with `expected`.
    public func expectReply<T: Decodable & Equatable>(_ id: RequestID, _ expected: T, sourceLocation: SourceLocation = #_sourceLocation) {
        switch replies.removeValue(forKey: id) {
        case nil: report("request \(id) was not answered", sourceLocation)
        case .failure(let error)?: report("request \(id) was answered \(error), expected \(expected)", sourceLocation)
        case .success(let bytes)?:
            do {
                let value = try JSONDecoder().decode(T.self, from: Data(bytes))
                if value != expected { report("request \(id) was answered \(value)\n  but expected \(expected)", sourceLocation) }
            } catch {
                report("request \(id)'s answer is not a \(T.self): \(String(decoding: bytes, as: UTF8.self))", sourceLocation)
            }
        }
    }

    /// Checks that request `id` was answered with an error of `status` and `code`.
    public func expectFailure(_ id: RequestID, status: Int, code: String, sourceLocation: SourceLocation = #_sourceLocation) {
        switch replies.removeValue(forKey: id) {
        case nil: report("request \(id) was not answered", sourceLocation)
        case .success(let bytes)?:
            report("request \(id) succeeded with \(String(decoding: bytes, as: UTF8.self)), expected \(status) \(code)", sourceLocation)
        case .failure(let error)?:
            if error.status != status || error.code != code {
                report("request \(id) failed with \(error), expected \(status) \(code)", sourceLocation)
            }
        }
    }

    /// The answer to request `id`, if it was answered (and forgets it).
    public func reply(_ id: RequestID) -> Result<[UInt8], ServiceError>? { replies.removeValue(forKey: id) }

    /// Checks that the oldest change event not yet checked is `value` on `topic`.
    public func expectPublish<T: Encodable>(_ topic: String, _ value: T, sourceLocation: SourceLocation = #_sourceLocation) {
        guard !events.isEmpty else {
            report("expected a publish on \(topic), but nothing was published", sourceLocation)
            return
        }
        let event = events.removeFirst()
        let bytes = (try? JSONEncoder.bus.encode(value)).map(Array.init) ?? []
        if event.topic != topic || event.payload != bytes {
            report(
                "published \(event.topic) \(String(decoding: event.payload, as: UTF8.self))\n  but expected \(topic) \(String(decoding: bytes, as: UTF8.self))",
                sourceLocation)
        }
    }

    /// Ends the test: fails on actions not received, change events not checked, and effects
    /// still running (after giving finished ones up to `timeout` to wind up); stops the timers.
    public func finish(timeout: Duration = .seconds(1), sourceLocation: SourceLocation = #_sourceLocation) async {
        let deadline = ContinuousClock.now + timeout
        while !runs.isEmpty, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        checkNothingReceived(before: "finishing", sourceLocation)
        let unanswered = requests.filter { !answered.contains($0) }
        if !unanswered.isEmpty {
            // The service would answer these 504 after its request timeout.
            report("request(s) never answered: \(unanswered.map(\.description).joined(separator: ", "))", sourceLocation)
        }
        if !events.isEmpty {
            report("\(events.count) publish(es) not checked: \(events.map(\.topic).joined(separator: ", "))", sourceLocation)
            events = []
        }
        if !runs.isEmpty {
            report("\(runs.count) effect(s) still running: \(runs.values.map(\.name).sorted().joined(separator: ", "))", sourceLocation)
            for run in runs.values { run.task.cancel() }
            runs = [:]
        }
        for timer in timers.values { timer.task.cancel() }
        timers = [:]
    }

    /// Stops every effect and timer without checking anything (a test that expects failures).
    public func skipRemaining() {
        for run in runs.values { run.task.cancel() }
        for timer in timers.values { timer.task.cancel() }
        runs = [:]
        timers = [:]
        received = []
        events = []
    }

    // MARK: the step

    private func checkNothingReceived(before what: String, _ location: SourceLocation) {
        guard !received.isEmpty else { return }
        report(
            "\(received.count) action(s) sent back and not received before \(what): \(received.map { "\($0.action)" }.joined(separator: ", "))",
            location)
        received = []
    }

    private func apply(_ action: F.Action, cause: Cause, expected: ((inout F.State) throws -> Void)?, _ location: SourceLocation) {
        let before = state
        switch Reduction.apply(feature, middleware: middleware, state: &state, action: action, cause: cause) {
        case .refused(let error, _, _):
            lastRefusal = error
            if let request = cause.request {
                replies[request] = .failure(error)
                answered.insert(request)
            }
        case .applied(let effect, _):
            perform(effect, cause: cause)
        }
        var wanted = before
        do {
            try expected?(&wanted)
        } catch {
            report("the assertion closure threw \(error)", location)
        }
        if wanted != state {
            report(
                "the state after \(ActionName.of(action)) is not what the test expected\n  expected: \(wanted)\n  actual:   \(state)", location)
        }
    }

    private func perform(_ effect: Effect<F.Action>, cause: Cause) {
        var pendingEvents: [(topic: String, payload: [UInt8])] = []
        var pendingReplies: [(RequestID, Result<[UInt8], ServiceError>)] = []
        effect.visit { operation in
            switch operation {
            case .run(let id, let cancelInFlight, let name, let body):
                if let id, cancelInFlight { cancel(id) }
                start(id: id, name: name, body: body, cause: cause)
            case .cancel(let id): cancel(id)
            case .sync(let work): work()
            case .publish(let topic, .success(let payload)): pendingEvents.append((topic, payload))
            case .publish(let topic, .failure(let error)): report("the event on \(topic) could not be published: \(error)", #_sourceLocation)
            case .reply(let id, let result): pendingReplies.append((id, result))
            }
        }
        let (publishes, errors) = tracker.changes(in: state)
        statePublishes += publishes
        for error in errors { report("a state topic could not be published: \(error)", #_sourceLocation) }
        events += pendingEvents
        for (id, result) in pendingReplies {
            replies[id] = result
            answered.insert(id)
        }
        reconcileTimers()
    }

    private func start(id: EffectID?, name: String, body: @escaping @Sendable (Send<F.Action>) async -> RunEnd<F.Action>, cause: Cause) {
        let token = nextToken
        nextToken += 1
        let send = Send<F.Action> { [weak self] action in await self?.deliver(action, cause: cause, token: token) }
        let task = Task { [weak self] in
            switch await body(send) {
            case .finished, .cancelled: break
            case .action(let action): self?.deliver(action, cause: cause, token: token)
            case .failed(let reason): self?.report("effect \(name) failed: \(reason)", #_sourceLocation)
            }
            self?.runs[token] = nil
        }
        runs[token] = (id, name, task)
    }

    private func deliver(_ action: F.Action, cause: Cause, token: Int) {
        guard runs[token] != nil else { return }
        received.append((action, cause))
    }

    private func cancel(_ id: EffectID) {
        for (token, run) in runs where run.id == id {
            run.task.cancel()
            runs[token] = nil
        }
    }

    private func reconcileTimers() {
        var ids = Set<EffectID>()
        for timer in feature.timers(for: state) {
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
                        try await clock.sleep(for: interval)
                    } catch {
                        return
                    }
                    guard let self, self.timers[id]?.generation == generation else { return }
                    self.received.append((action, Cause(kind: .timer, id: id.name)))
                }
            }
            timers[timer.id] = (timer.interval, generation, task)
        }
        for (id, timer) in timers where !ids.contains(id) {
            timer.task.cancel()
            timers[id] = nil
        }
    }
}
