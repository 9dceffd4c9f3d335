import Bus
import Foundation

/// A feature as a bus service: its name, initial state, state topics, the methods and
/// observed topics that become actions, and the middleware. ``FeatureService/run(name:overview:options:arguments:setup:)``
/// serves it.
///
/// ```swift
/// var service = ServiceDefinition(name: "counter", feature: Counter(), initialState: .init())
/// service.state(.state("counter.state"))
/// service.method("add") { id, input: Add in .addRequested(id, by: input.by) }
/// ```
public struct ServiceDefinition<F: Feature>: Sendable {
    /// The service name workers register and the prefix of its topics.
    public let name: String
    public var feature: F
    /// The state before restore.
    public var initialState: F.State
    /// Sent once after restore, before serving (the seeds' `launched`/`onAppear`).
    public var startAction: F.Action?
    /// Requests handled at once (`--concurrency` overrides it). The store still reduces one
    /// action at a time; more workers only keep a request that waits on an effect from
    /// holding up the next one.
    public var concurrency = 4
    /// How long restore waits for `persist` at start.
    public var restoreDeadline: Duration = .seconds(5)
    /// How long the service waits, at start, for each observed topic's current value before it
    /// registers its methods (a topic with no retained value yet does not hold it up longer).
    public var observeDeadline: Duration = .seconds(2)
    /// How long a request waits for the reducer's answer before it is answered 504.
    public var requestTimeout: Duration = .seconds(30)
    /// Drives the timers.
    public var clock: ServiceClock = .live
    public private(set) var stateTopics: [StateTopic<F.State>] = []
    public private(set) var middleware: [Middleware<F>] = []
    private(set) var methods: [(name: String, handle: MethodHandler)] = []
    private(set) var observations: [Observation] = []

    typealias MethodHandler = @Sendable (Store<F>, ServiceRequest, Duration) async throws -> [UInt8]
    typealias Observation = @Sendable (BusClient, Store<F>, FirstValueSignal) throws -> Task<Void, Never>

    public init(name: String, feature: F, initialState: F.State) {
        self.name = name
        self.feature = feature
        self.initialState = initialState
    }

    /// Declares a state topic (published retained on change, persisted, restored).
    public mutating func state(_ topic: StateTopic<F.State>) { stateTopics.append(topic) }

    /// Adds a middleware; they run in the order added.
    public mutating func use(_ middleware: Middleware<F>) { self.middleware.append(middleware) }

    /// Maps the method `name` to an action: the JSON payload decodes as `Input` (400
    /// `invalid_json` / `invalid_request` when it does not), and the reply is what the reducer
    /// answers for the request id.
    public mutating func method<Input: Decodable & Sendable>(
        _ name: String, _ action: @escaping @Sendable (RequestID, Input) -> F.Action
    ) {
        method(name, withRequest: { id, input, _ in action(id, input) })
    }

    /// As ``method(_:_:)``, with the request (its meta's caller, ids) at hand.
    public mutating func method<Input: Decodable & Sendable>(
        _ name: String, withRequest action: @escaping @Sendable (RequestID, Input, ServiceRequest) -> F.Action
    ) {
        methods.append(
            (
                name,
                { store, request, timeout in
                    let input = try request.decode(Input.self)
                    let result = await store.request(id: request.meta.id, correlationID: request.meta.correlationID, timeout: timeout) { id in
                        action(id, input, request)
                    }
                    return try result.get()
                }
            ))
    }

    /// Maps every value of an observed state topic to an action, with the library's gap-free
    /// ``BusClient/observe(_:as:)``: the current value at once, then every change. Payloads that
    /// are not a `Value` are logged and skipped.
    public mutating func observe<Value: Decodable & Sendable>(
        _ topic: String, as type: Value.Type = Value.self, _ action: @escaping @Sendable (Observed<Value>) -> F.Action
    ) {
        observations.append { bus, store, first in
            let stream = try bus.observe(topic, as: Value.self)
            return Task {
                for await observed in stream {
                    let cause = Cause(kind: .event, id: "\(topic)#\(observed.seq)", correlationID: observed.meta.correlationID)
                    await store.send(action(observed), cause: cause)
                    first.signal()
                }
            }
        }
    }

    /// The store this definition describes, on `ports`.
    public func makeStore(ports: StorePorts, logger: Logger) -> Store<F> {
        Store(feature, initialState: initialState, stateTopics: stateTopics, middleware: middleware, ports: ports, clock: clock, logger: logger)
    }

    /// The bus service whose methods feed `store`, plus `stats` (the store's counters) unless
    /// the feature has its own.
    public func busService(store: Store<F>, concurrency: Int? = nil) -> BusService {
        let service = BusService(name: name, concurrency: concurrency ?? self.concurrency)
        let timeout = requestTimeout
        for (name, handle) in methods {
            service.method(name, raw: { request in try await handle(store, request, timeout) })
        }
        if !methods.contains(where: { $0.name == "stats" }) {
            service.method(
                "stats",
                raw: { request in
                    _ = try request.decode(Empty.self)
                    return Array(try JSONEncoder.bus.encode(await store.stats()))
                })
        }
        return service
    }

    /// Starts every observation on `bus`.
    func startObservations(bus: BusClient, store: Store<F>) throws -> [Task<Void, Never>] {
        try startObservations(bus: bus, store: store, signals: observations.map { _ in FirstValueSignal() })
    }

    func startObservations(bus: BusClient, store: Store<F>, signals: [FirstValueSignal]) throws -> [Task<Void, Never>] {
        var tasks: [Task<Void, Never>] = []
        for (observation, signal) in zip(observations, signals) { tasks.append(try observation(bus, store, signal)) }
        return tasks
    }
}

/// The payload of a method that takes nothing: `{}`.
public struct Empty: Codable, Sendable, Equatable {
    public init() {}
}
