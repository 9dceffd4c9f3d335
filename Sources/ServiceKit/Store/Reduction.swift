import Bus

/// One action through the reducer and the middleware: the step ``Store`` and the test store
/// share, so tests see exactly the refusals and effects the service would.
package enum Reduction {
    package enum Outcome<F: Feature> {
        case applied(Effect<F.Action>, ActionRecord<F>)
        /// A middleware refused: the state is back to what it was.
        case refused(ServiceError, by: String, ActionRecord<F>)
    }

    package static func apply<F: Feature>(
        _ feature: F, middleware: [Middleware<F>], state: inout F.State, action: F.Action, cause: Cause
    ) -> Outcome<F> {
        let before = state
        let start = ContinuousClock.now
        let effect = feature.reduce(into: &state, action)
        let duration = ContinuousClock.now - start
        let record = ActionRecord<F>(action: action, name: ActionName.of(action), before: before, after: state, duration: duration, cause: cause)
        for item in middleware {
            if case .refuse(let error) = item.inspect(record) {
                state = before
                return .refused(error, by: item.name, record)
            }
        }
        return .applied(effect, record)
    }
}
