import Bus
import Foundation
import ServiceKit

/// A small feature that exercises every kind of effect, for the runtime's and the test
/// store's tests.
struct Lab: Feature {
    struct State: Codable, Equatable, Sendable {
        var value = 0
        var query = ""
        var results: [String] = []
        var ticking = false
        var ticks = 0
        var items: [String: Int] = [:]
        var saved = 0
    }

    enum Action: Equatable, Sendable {
        case addRequested(RequestID, Int)
        case readRequested(RequestID)
        case ignoredRequested(RequestID)
        case searchSubmitted(String)
        case resultsLoaded(String, [String])
        case searchFailed(String)
        case tickingChanged(Bool)
        case ticked
        case itemSet(String, Int?)
        case announced(String)
        case savedDurably
    }

    struct Value: Codable, Equatable, Sendable {
        var value: Int
    }

    /// The search dependency: a struct-of-closures value in real features.
    var lookup: @Sendable (String) async throws -> [String]
    /// Written by the `sync` effect of `savedDurably` (a stand-in for a token file).
    var durable = Locked<[Int]>([])

    func reduce(into state: inout State, _ action: Action) -> Effect<Action> {
        switch action {
        case .addRequested(let id, let by):
            state.value += by
            return .reply(id, Value(value: state.value))
        case .readRequested(let id):
            return .reply(id, Value(value: state.value))
        case .ignoredRequested:
            return .none
        case .searchSubmitted(let query):
            state.query = query
            let lookup = self.lookup
            return .run(id: "search", cancelInFlight: true, name: "search") { send in
                await send(.resultsLoaded(query, try await lookup(query)))
            } catch: { _ in
                .searchFailed(query)
            }
        case .resultsLoaded(let query, let results):
            guard query == state.query else { return .none }
            state.results = results
            return .none
        case .searchFailed:
            state.results = []
            return .none
        case .tickingChanged(let on):
            state.ticking = on
            return .none
        case .ticked:
            state.ticks += 1
            return .none
        case .itemSet(let key, let value):
            state.items[key] = value
            return .none
        case .announced(let text):
            return .publish("lab.announced", ["text": text])
        case .savedDurably:
            state.saved += 1
            let durable = self.durable
            let saved = state.saved
            return .sync { durable.withLock { $0.append(saved) } }
        }
    }

    func timers(for state: State) -> [FeatureTimer<Action>] {
        state.ticking ? [FeatureTimer("tick", every: .seconds(30), send: .ticked)] : []
    }

    static let topics: [StateTopic<State>] = [
        .value("lab.state", { Value(value: $0.value) }, restore: { state, saved in state.value = saved.value }),
        .value("lab.items", { $0.items.keys.sorted() }, restore: { state, keys in for key in keys { state.items[key] = state.items[key] ?? 0 } }),
        .family("lab.item", keys: { $0.items.keys.sorted() }, value: { $0.items[$1] }, restore: { state, key, value in state.items[key] = value }),
    ]
}

/// What a store sent to its ports.
final class PortRecorder: Sendable {
    struct Publish: Equatable, Sendable {
        var topic: String
        var payload: String
        var retain: Bool
        var causation: String
    }

    let published = Locked<[Publish]>([])
    let saved: Locked<[String: String]>
    let restoreCalls = Locked<[String]>([])

    init(saved: [String: String] = [:]) { self.saved = Locked(saved) }

    var ports: StorePorts {
        StorePorts(
            publish: { topic, payload, retain, cause in
                self.published.withLock {
                    $0.append(Publish(topic: topic, payload: String(decoding: payload, as: UTF8.self), retain: retain, causation: cause.id))
                }
            },
            restore: { topic in
                self.restoreCalls.withLock { $0.append(topic) }
                return self.saved.withLock { $0[topic] }.map { Array($0.utf8) }
            })
    }

    var topics: [String] { published.value.map(\.topic) }
}
