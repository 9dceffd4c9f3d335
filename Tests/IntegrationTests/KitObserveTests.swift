import Bus
import BusTestSupport
import Foundation
import Testing

@testable import ServiceKit

/// A kit store on a real kernel: an observed retained topic becomes actions (current value
/// first, then every change), and the store's own state topic reaches the kernel with the
/// observed event as its causation id.
@Suite(.serialized)
struct KitObserveTests {
    struct Mirror: Feature {
        struct State: Codable, Equatable, Sendable {
            var seen: [Int] = []
        }

        enum Action: Sendable, Equatable {
            case sourceChanged(Int)
        }

        func reduce(into state: inout State, _ action: Action) -> Effect<Action> {
            switch action {
            case .sourceChanged(let value):
                state.seen.append(value)
                return .none
            }
        }
    }

    @Test func observedTopic_feedsTheReducer_currentValueFirst_andPublishesCarryItsCausation() async throws {
        try await Harness.with { h in
            let source = h.client(name: "test")
            try await source.publish("test.source", 1, retain: true)
            #expect(await eventually { (try? await source.retained("test.source")) != nil })

            var definition = ServiceDefinition(name: "test", feature: Mirror(), initialState: Mirror.State())
            definition.state(.value("test.mirror", { $0.seen }))
            definition.observe("test.source", as: Int.self) { .sourceChanged($0.value) }
            let bus = h.client(name: "test")
            let store = definition.makeStore(ports: .bus(bus), logger: Logger(label: "kit-observe", level: .critical))
            try await store.restore()
            await store.start()
            let observations = try definition.startObservations(bus: bus, store: store)
            defer { for task in observations { task.cancel() } }

            #expect(await eventually { await store.state.seen == [1] })
            // The current value comes by request; the changes need the observation's subscription
            // live in the kernel (one published before it lands is skipped: an observer keeps
            // only the newest).
            try await bus.confirmSubscriptions()
            for value in 2...4 { try await source.publish("test.source", value, retain: true) }
            #expect(await eventually { await store.state.seen == [1, 2, 3, 4] })

            let mirrored = await eventually {
                guard let value = try? await bus.retained("test.mirror") else { return false }
                return String(decoding: value.payload, as: UTF8.self) == "[1,2,3,4]"
            }
            #expect(mirrored)
            let last = try #require(try await bus.retained("test.mirror"))
            let sourceSeq = try #require(try await bus.retained("test.source")).meta.seq
            #expect(last.meta.causationID == "test.source#\(sourceSeq)")
            await store.shutdown()
        }
    }
}
