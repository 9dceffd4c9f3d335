import Bus
import Foundation

/// The work a reducer asks for after an action: nothing, async work that sends actions back,
/// a cancellation, a change event, the answer to a request, or several of these merged.
///
/// Effects are data: the store (or the test store) performs them in the order they were
/// merged. A reply is sent after the state topics the same action changed were published, so a
/// caller that reads the state after its reply sees the change.
public struct Effect<Action: Sendable>: Sendable {
    let operations: [Operation]

    init(_ operations: [Operation]) { self.operations = operations }

    enum Operation: Sendable {
        case run(Run)
        case cancel(EffectID)
        case sync(name: String, @Sendable () -> Void)
        case publish(topic: String, payload: Result<[UInt8], ServiceError>)
        case reply(RequestID, Result<[UInt8], ServiceError>)
    }

    struct Run: Sendable {
        var id: EffectID?
        var cancelInFlight: Bool
        var name: String
        var operation: @Sendable (Send<Action>) async throws -> Void
        var onError: (@Sendable (any Error) -> Action?)?
    }

    /// No work.
    public static var none: Effect { Effect([]) }

    /// Async work (an HTTP call through a dependency, a wait on a clock) that sends actions
    /// back through `send`. It runs off the store, on the cooperative pool.
    ///
    /// - Parameters:
    ///   - id: names the work so ``cancel(_:)`` can stop it; nil: it cannot be cancelled.
    ///   - cancelInFlight: cancel running work with the same id first (a newer search
    ///     replaces an older one).
    ///   - name: what the logs and counters call it.
    ///   - operation: the work. Cancellation shows as `CancellationError` from a clock or HTTP
    ///     call; once cancelled, what it sends is dropped.
    ///   - onError: the action for an error the operation throws (not for cancellation);
    ///     nil: the error is logged and counted as a failed effect.
    public static func run(
        id: EffectID? = nil, cancelInFlight: Bool = false, name: String = "run",
        _ operation: @escaping @Sendable (Send<Action>) async throws -> Void,
        catch onError: (@Sendable (any Error) -> Action?)? = nil
    ) -> Effect {
        Effect([.run(Run(id: id, cancelInFlight: cancelInFlight, name: name, operation: operation, onError: onError))])
    }

    /// Cancels the running work named `id` (nothing when none runs); what it sends afterwards
    /// is dropped. Timers are not cancelled this way: they run while the state wants them.
    public static func cancel(_ id: EffectID) -> Effect { Effect([.cancel(id)]) }

    /// Work that must be done before the state this action produced is published, on the
    /// store, without suspending (a small file write that makes the state durable). Keep it
    /// short: the store handles nothing else meanwhile.
    public static func sync(name: String = "sync", _ work: @escaping @Sendable () -> Void) -> Effect {
        Effect([.sync(name: name, work)])
    }

    /// Publishes a change event (not retained) on `topic`, after the state topics.
    public static func publish<Value: Encodable>(_ topic: String, _ value: Value) -> Effect {
        Effect([.publish(topic: topic, payload: encode(value, what: "the event on '\(topic)'"))])
    }

    /// Answers the request `id` with `value` as JSON (status 200).
    public static func reply<Value: Encodable>(_ id: RequestID, _ value: Value) -> Effect {
        Effect([.reply(id, encode(value, what: "the reply"))])
    }

    /// Answers the request `id` with JSON already encoded (status 200).
    public static func reply(_ id: RequestID, json: [UInt8]) -> Effect {
        Effect([.reply(id, .success(json))])
    }

    /// Answers the request `id` with an error status.
    public static func fail(_ id: RequestID, _ error: ServiceError) -> Effect {
        Effect([.reply(id, .failure(error))])
    }

    /// All of `effects`, in order.
    public static func merge(_ effects: Effect...) -> Effect { merge(effects) }

    /// All of `effects`, in order.
    public static func merge(_ effects: [Effect]) -> Effect { Effect(effects.flatMap(\.operations)) }

    /// This effect, then `other`.
    public func merge(with other: Effect) -> Effect { Effect(operations + other.operations) }

    /// Whether this effect does nothing.
    public var isNone: Bool { operations.isEmpty }

    /// The same effect for a wider action type (a feature embedding another's actions).
    public func map<Other: Sendable>(_ transform: @escaping @Sendable (Action) -> Other) -> Effect<Other> {
        Effect<Other>(operations.map { Self.map($0, transform) })
    }

    private static func map<Other: Sendable>(_ operation: Operation, _ transform: @escaping @Sendable (Action) -> Other) -> Effect<Other>.Operation {
        switch operation {
        case .run(let run): return .run(map(run, transform))
        case .cancel(let id): return .cancel(id)
        case .sync(let name, let work): return .sync(name: name, work)
        case .publish(let topic, let payload): return .publish(topic: topic, payload: payload)
        case .reply(let id, let result): return .reply(id, result)
        }
    }

    private static func map<Other: Sendable>(_ run: Run, _ transform: @escaping @Sendable (Action) -> Other) -> Effect<Other>.Run {
        let operation = run.operation
        let inner: @Sendable (Send<Other>) async throws -> Void = { send in
            let narrow = Send<Action> { action in await send(transform(action)) }
            try await operation(narrow)
        }
        var onError: (@Sendable (any Error) -> Other?)?
        if let handler = run.onError {
            onError = { error in
                guard let action = handler(error) else { return nil }
                return transform(action)
            }
        }
        return Effect<Other>.Run(id: run.id, cancelInFlight: run.cancelInFlight, name: run.name, operation: inner, onError: onError)
    }

    static func encode<Value: Encodable>(_ value: Value, what: String) -> Result<[UInt8], ServiceError> {
        do {
            return .success(Array(try JSONEncoder.bus.encode(value)))
        } catch {
            return .failure(ServiceError(500, "internal", "cannot encode \(what) as JSON: \(error)"))
        }
    }
}

/// One step of an effect as the test store performs it (the operations stay internal).
package enum EffectStep<Action: Sendable> {
    /// Work; `body` returns how it ended.
    case run(id: EffectID?, cancelInFlight: Bool, name: String, body: @Sendable (Send<Action>) async -> RunEnd<Action>)
    case cancel(EffectID)
    case sync(@Sendable () -> Void)
    case publish(topic: String, payload: Result<[UInt8], ServiceError>)
    case reply(RequestID, Result<[UInt8], ServiceError>)
}

/// How a run effect ended.
package enum RunEnd<Action: Sendable>: Sendable {
    case finished
    case cancelled
    /// It threw, and its error handler made this action.
    case action(Action)
    /// It threw an error no handler took.
    case failed(String)
}

extension Effect {
    /// Calls `body` with each step, in order.
    package func visit(_ body: (EffectStep<Action>) -> Void) {
        for operation in operations {
            switch operation {
            case .run(let run): body(.run(id: run.id, cancelInFlight: run.cancelInFlight, name: run.name, body: run.execute))
            case .cancel(let id): body(.cancel(id))
            case .sync(_, let work): body(.sync(work))
            case .publish(let topic, let payload): body(.publish(topic: topic, payload: payload))
            case .reply(let id, let result): body(.reply(id, result))
            }
        }
    }
}

extension Effect.Run {
    /// Runs the operation and says how it ended: the one place that tells cancellation from failure.
    @Sendable func execute(_ send: Send<Action>) async -> RunEnd<Action> {
        do {
            try await operation(send)
            return .finished
        } catch {
            if Task.isCancelled || error is CancellationError { return .cancelled }
            if let action = onError?(error) { return .action(action) }
            return .failed("\(error)")
        }
    }
}
