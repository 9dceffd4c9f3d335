import Bus

/// A service's logic as a value: its state, the actions that happen to it, and a pure reducer.
///
/// ```swift
/// struct Counter: Feature {
///     struct State: Codable, Equatable, Sendable { var value = 0 }
///     enum Action: Sendable { case addRequested(RequestID, by: Int) }
///     func reduce(into state: inout State, _ action: Action) -> Effect<Action> {
///         switch action {
///         case .addRequested(let id, let by):
///             state.value += by
///             return .reply(id, state)
///         }
///     }
/// }
/// ```
/// A feature holds its dependencies (an HTTP client, a clock) as stored properties, so a test
/// builds it with test values and drives it with ``TestStore`` (in `ServiceKitTesting`), with
/// no sockets. At run time a ``Store`` feeds it one action at a time.
public protocol Feature: Sendable {
    /// Everything the service knows; saved through its state topics and restored at start.
    associatedtype State: Codable & Equatable & Sendable
    /// What happened: a request arrived, an observed topic changed, an effect finished. Named
    /// for the event (`cityFollowRequested`, `forecastLoaded`), not for what to do about it.
    associatedtype Action: Sendable

    /// Applies `action` to `state` and returns the work to do next. Pure: no I/O, no clock,
    /// no randomness except through the effect it returns.
    func reduce(into state: inout State, _ action: Action) -> Effect<Action>

    /// The repeating timers `state` wants running now (the seeds' 30-minute refresh). The store
    /// asks after every action: a timer that appears starts, one that disappears (or changes
    /// its interval) is cancelled.
    func timers(for state: State) -> [FeatureTimer<Action>]
}

extension Feature {
    /// No timers.
    public func timers(for state: State) -> [FeatureTimer<Action>] { [] }
}

/// A repeating timer a feature wants while its state says so.
public struct FeatureTimer<Action: Sendable>: Sendable {
    /// Names the timer: the store keeps one timer per id.
    public var id: EffectID
    /// The time between two firings; the first fires one interval after the timer starts.
    public var interval: Duration
    /// What is sent to the reducer on each firing.
    public var action: Action

    /// - Parameters:
    ///   - id: the timer's name.
    ///   - interval: the time between firings (at least 1 ms).
    ///   - action: the action sent on each firing.
    public init(_ id: EffectID, every interval: Duration, send action: Action) {
        self.id = id
        self.interval = max(interval, .milliseconds(1))
        self.action = action
    }
}
