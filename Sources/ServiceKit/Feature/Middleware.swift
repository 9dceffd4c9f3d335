import Bus

/// A function that sees every action with the state before and after it, in the order the
/// middleware were declared. It may refuse the action: the state goes back to what it was,
/// the effects are dropped, and the request that caused the action (if any) is answered with
/// the error (the Flux seed's invariant check, done as a refusal instead of a crash).
public struct Middleware<F: Feature>: Sendable {
    public let name: String
    let inspect: @Sendable (ActionRecord<F>) -> MiddlewareVerdict

    /// - Parameters:
    ///   - name: for the logs and counters.
    ///   - inspect: called after the reducer, before any effect runs.
    public init(_ name: String, _ inspect: @escaping @Sendable (ActionRecord<F>) -> MiddlewareVerdict) {
        self.name = name
        self.inspect = inspect
    }

    /// Logs each action's name, cause and reducer time at `level` (never its payload: actions
    /// carry passwords and tokens).
    public static func logging(_ logger: Logger, level: Logger.Level = .debug) -> Middleware {
        Middleware("logging") { record in
            logger.log(
                level, "\(record.name)",
                metadata: [
                    "cause": record.cause.description, "reducer_us": String(record.duration.microseconds),
                    "changed": record.before == record.after ? "no" : "yes",
                ])
            return .accept
        }
    }

    /// Refuses any action after which `check` finds the state broken (a non-nil error, such as
    /// 409 "going_count does not match the going list").
    public static func invariant(_ name: String = "invariant", _ check: @escaping @Sendable (F.State) -> ServiceError?) -> Middleware {
        Middleware(name) { record in
            if let error = check(record.after) { return .refuse(error) }
            return .accept
        }
    }

    /// Calls `observe` with every action (a test hook, a metrics exporter); never refuses.
    public static func hook(_ name: String = "hook", _ observe: @escaping @Sendable (ActionRecord<F>) -> Void) -> Middleware {
        Middleware(name) { record in
            observe(record)
            return .accept
        }
    }
}

/// What a middleware decides.
public enum MiddlewareVerdict: Sendable, Equatable {
    case accept
    /// Undo the action and answer its request with this error.
    case refuse(ServiceError)
}

/// One action as the middleware see it.
public struct ActionRecord<F: Feature>: Sendable {
    public let action: F.Action
    /// The action's case name (``ActionName``).
    public let name: String
    public let before: F.State
    public let after: F.State
    /// How long the reducer took.
    public let duration: Duration
    public let cause: Cause
}

extension Duration {
    /// Whole microseconds.
    var microseconds: Int64 { components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000 }
}
