/// A store's counters, as its service's `stats` method answers them.
public struct StoreStats: Codable, Sendable, Equatable {
    /// Actions reduced (refused ones included).
    public var actions: Int = 0
    /// Actions a middleware refused.
    public var refused: Int = 0
    /// Time spent in the reducer, in total and for the slowest action, in microseconds.
    public var reducerMicros: Int64 = 0
    public var slowestReducerMicros: Int64 = 0
    /// Effects started, running now, and failed (threw an error no action handles).
    public var effectsStarted: Int = 0
    public var effectsInFlight: Int = 0
    public var effectsFailed: Int = 0
    /// Requests answered, answered with an error status, and waiting for the reducer now.
    public var requests: Int = 0
    public var requestErrors: Int = 0
    public var requestsWaiting: Int = 0
    /// Retained state-topic publishes and change events queued, and publishes the bus refused.
    public var statePublishes: Int = 0
    public var eventPublishes: Int = 0
    public var publishFailures: Int = 0
    /// Timers running now.
    public var timers: Int = 0
    /// Actions per case name.
    public var byAction: [String: Int] = [:]

    enum CodingKeys: String, CodingKey {
        case actions, refused, requests, timers
        case reducerMicros = "reducer_us"
        case slowestReducerMicros = "slowest_reducer_us"
        case effectsStarted = "effects_started"
        case effectsInFlight = "effects_in_flight"
        case effectsFailed = "effects_failed"
        case requestErrors = "request_errors"
        case requestsWaiting = "requests_waiting"
        case statePublishes = "state_publishes"
        case eventPublishes = "event_publishes"
        case publishFailures = "publish_failures"
        case byAction = "by_action"
    }
}
