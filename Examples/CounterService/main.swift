// The smallest service on the kit: `counter`, with `add {"by": N}` and `get {}` answering
// `{"value": V}`, and its state retained on `counter.state`, saved by persist, restored at start.
import Bus
import ServiceKit

struct Counter: Feature {
    struct State: Codable, Equatable, Sendable {
        var value = 0
    }

    enum Action: Sendable, Equatable {
        case addRequested(RequestID, by: Int)
        case getRequested(RequestID)
    }

    struct Add: Codable, Sendable {
        var by: Int
    }

    func reduce(into state: inout State, _ action: Action) -> Effect<Action> {
        switch action {
        case .addRequested(let id, let by):
            let (sum, overflow) = state.value.addingReportingOverflow(by)
            guard !overflow else { return .fail(id, .badRequest("adding \(by) to \(state.value) overflows")) }
            state.value = sum
            return .reply(id, state)
        case .getRequested(let id):
            return .reply(id, state)
        }
    }
}

await FeatureService.run(name: "counter", overview: "A counter on the service kit: add, get, counter.state.") { context in
    var service = ServiceDefinition(name: "counter", feature: Counter(), initialState: Counter.State())
    service.state(.state("counter.state"))
    service.method("add") { (id, input: Counter.Add) in .addRequested(id, by: input.by) }
    service.method("get") { (id, _: Empty) in .getRequested(id) }
    service.use(.logging(context.logger))
    return service
}
