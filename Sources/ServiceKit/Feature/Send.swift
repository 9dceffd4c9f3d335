/// Sends an action back to the store from a ``Effect/run(id:cancelInFlight:name:_:catch:)``
/// effect. An effect that was cancelled sends nothing: its actions are dropped.
public struct Send<Action: Sendable>: Sendable {
    let deliver: @Sendable (Action) async -> Void

    /// - Parameter deliver: what sending does (the store's entry point, or a test's recorder).
    public init(_ deliver: @escaping @Sendable (Action) async -> Void) { self.deliver = deliver }

    /// Sends `action` to the reducer and waits until the store has taken it.
    public func callAsFunction(_ action: Action) async { await deliver(action) }
}
