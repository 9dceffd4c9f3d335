import Bus
import BusTestSupport
import Foundation
import ServiceKit
import Testing

/// The store (the kit's runtime) on recording ports: ordering, cancellation, publishing,
/// restore, causation, timers, refusals.
struct StoreTests {
    func makeStore(
        _ recorder: PortRecorder, lookup: @escaping @Sendable (String) async throws -> [String] = { [$0] }, clock: ManualClock = ManualClock(),
        middleware: [Middleware<Lab>] = []
    ) -> Store<Lab> {
        Store(
            Lab(lookup: lookup), initialState: Lab.State(), stateTopics: Lab.topics, middleware: middleware, ports: recorder.ports,
            clock: .manual(clock), logger: Logger(label: "store-test", level: .critical))
    }

    func value(_ result: Result<[UInt8], ServiceError>) throws -> Int {
        try JSONDecoder().decode(Lab.Value.self, from: Data(try result.get())).value
    }

    @Test func requests_areReducedOneAtATime_andEachSeesTheStateBeforeIt() async throws {
        let recorder = PortRecorder()
        let store = makeStore(recorder)
        await store.start()
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 { group.addTask { try self.value(await store.request { .addRequested($0, 1) }) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.sorted() == Array(1...50))
        #expect(await store.state.value == 50)
        await store.shutdown()
        let values = recorder.published.value.filter { $0.topic == "lab.state" }.map(\.payload)
        #expect(values == (0...50).map { "{\"value\":\($0)}" })
    }

    @Test func stateTopics_arePublishedRetainedOnlyWhenTheirValueChanged() async throws {
        let recorder = PortRecorder()
        let store = makeStore(recorder)
        await store.start()
        _ = await store.request { .readRequested($0) }
        _ = await store.request { .addRequested($0, 0) }
        await store.send(.itemSet("a", 1), cause: Cause(kind: .test, id: "t1"))
        await store.send(.itemSet("a", 1), cause: Cause(kind: .test, id: "t2"))
        await store.send(.itemSet("a", nil), cause: Cause(kind: .test, id: "t3"))
        await store.shutdown()
        #expect(
            recorder.published.value.map { "\($0.topic)=\($0.payload)" } == [
                "lab.state={\"value\":0}", "lab.items=[]", "lab.items=[\"a\"]", "lab.item.a=1", "lab.items=[]", "lab.item.a=null",
            ])
        #expect(recorder.published.value.allSatisfy { $0.retain })
    }

    @Test func republishAll_publishesEveryStateTopicAgain_removedMembersAsNull() async throws {
        let recorder = PortRecorder()
        let store = makeStore(recorder)
        await store.start()
        await store.send(.itemSet("a", 1), cause: Cause(kind: .test, id: "t1"))
        await store.send(.itemSet("b", 2), cause: Cause(kind: .test, id: "t2"))
        await store.send(.itemSet("a", nil), cause: Cause(kind: .test, id: "t3"))
        // Published by the store's outbox task: wait for the eight changes above.
        #expect(await eventually { recorder.published.value.count == 8 })
        let before = recorder.published.value.count
        await store.republishAll()
        await store.shutdown()
        let again = recorder.published.value.dropFirst(before)
        #expect(
            again.map { "\($0.topic)=\($0.payload)" } == [
                "lab.item.a=null", "lab.item.b=2", "lab.items=[\"b\"]", "lab.state={\"value\":0}",
            ])
        #expect(again.allSatisfy { $0.retain && $0.causation == "kernel-return" })
    }

    @Test func publishes_carryTheCausationIdOfTheRequestOrEventThatBeganTheChain() async throws {
        let recorder = PortRecorder()
        let store = makeStore(recorder)
        await store.start()
        _ = await store.request(id: "req-42") { .addRequested($0, 2) }
        await store.send(.announced("hi"), cause: Cause(kind: .event, id: "auth.state#7"))
        await store.send(.searchSubmitted("zur"), cause: Cause(kind: .event, id: "ui#1"))
        #expect(await eventually { await store.state.results == ["zur"] })
        await store.shutdown()
        let published = recorder.published.value
        #expect(published.first { $0.payload == "{\"value\":2}" }?.causation == "req-42")
        #expect(
            published.first { $0.topic == "lab.announced" }
                == .init(topic: "lab.announced", payload: "{\"text\":\"hi\"}", retain: false, causation: "auth.state#7"))
        #expect(published.first { $0.topic == "lab.state" }?.causation == "start")
    }

    @Test func cancelInFlight_dropsWhatTheOlderSearchSendsBack() async throws {
        let recorder = PortRecorder()
        let gate = Gate()
        let store = makeStore(recorder) { query in
            if query == "slow" { try await gate.wait() }
            return [query.uppercased()]
        }
        await store.start()
        await store.send(.searchSubmitted("slow"), cause: Cause(kind: .test, id: "1"))
        #expect(await eventually { gate.waiting })
        await store.send(.searchSubmitted("fast"), cause: Cause(kind: .test, id: "2"))
        #expect(await eventually { await store.state.results == ["FAST"] })
        #expect(gate.cancelled, "the older search was cancelled")
        #expect(await eventually { await store.stats().effectsInFlight == 0 })
        #expect(await store.state.results == ["FAST"])
        #expect(await store.stats().effectsFailed == 0)
        await store.shutdown()
    }

    @Test func restore_appliesSavedValuesBeforeServing_familiesByTheRestoredKeys_withoutPublishingThemAgain() async throws {
        let recorder = PortRecorder(saved: [
            "lab.state": "{\"value\":7}", "lab.items": "[\"a\",\"b\"]", "lab.item.a": "1", "lab.item.b": "null", "lab.item.c": "3",
        ])
        let store = makeStore(recorder)
        try await store.restore()
        #expect(await store.state.value == 7)
        #expect(await store.state.items == ["a": 1, "b": 0])
        #expect(recorder.restoreCalls.value == ["lab.state", "lab.items", "lab.item.a", "lab.item.b"])
        await store.start()
        #expect(try value(await store.request { .readRequested($0) }) == 7)
        await store.shutdown()
        // The index put the keys back, the family their values; only what differs from the
        // saved values is published: b's value (null was saved for it).
        #expect(recorder.published.value.map { "\($0.topic)=\($0.payload)" } == ["lab.item.b=0"])
    }

    @Test func restore_keepsLargeIntegersExact_andAPlainTopicsNullIsAValue() async throws {
        struct Big: Feature {
            struct State: Codable, Equatable, Sendable {
                var big: Int64 = 0
                var note: String? = "initial"
            }
            enum Action: Sendable { case touched }
            func reduce(into state: inout State, _ action: Action) -> Effect<Action> { .none }
        }
        let recorder = PortRecorder(saved: ["big.state": #"{"big":9223372036854775807,"note":null}"#])
        let store = Store(
            Big(), initialState: Big.State(), stateTopics: [.state("big.state")], ports: recorder.ports,
            logger: Logger(label: "store-test", level: .critical))
        try await store.restore()
        #expect(await store.state == Big.State(big: .max, note: nil))
        await store.start()
        await store.shutdown()
        #expect(recorder.published.value.isEmpty)
    }

    @Test func aTopicWithoutRestore_isPublishedButNeverAskedFor() async throws {
        let recorder = PortRecorder()
        let store = Store(
            Lab(lookup: { [$0] }), initialState: Lab.State(), stateTopics: [.value("lab.view", { $0.value })], ports: recorder.ports,
            logger: Logger(label: "store-test", level: .critical))
        try await store.restore()
        await store.start()
        await store.shutdown()
        #expect(recorder.restoreCalls.value.isEmpty)
        #expect(recorder.topics == ["lab.view"])
    }

    @Test func restore_failsRatherThanStartingOverASavedValueItCannotRead() async throws {
        let recorder = PortRecorder(saved: ["lab.state": "{\"count\":7}"])
        let store = makeStore(recorder)
        await #expect(throws: StoreError.self) { try await store.restore() }
        await store.shutdown()
    }

    @Test func timers_runWhileTheStateWantsThem_onTheManualClock() async throws {
        let recorder = PortRecorder()
        let clock = ManualClock()
        let store = makeStore(recorder, clock: clock)
        await store.start()
        #expect(await store.stats().timers == 0)
        await store.send(.tickingChanged(true), cause: Cause(kind: .test, id: "t"))
        #expect(await eventually { clock.sleepers == 1 })
        clock.advance(by: .seconds(29))
        #expect(await store.state.ticks == 0)
        clock.advance(by: .seconds(1))
        #expect(await eventually { await store.state.ticks == 1 })
        #expect(await eventually { clock.sleepers == 1 })
        clock.advance(by: .seconds(30))
        #expect(await eventually { await store.state.ticks == 2 })
        await store.send(.tickingChanged(false), cause: Cause(kind: .test, id: "t"))
        #expect(await store.stats().timers == 0)
        #expect(await eventually { clock.sleepers == 0 })
        clock.advance(by: .seconds(300))
        #expect(await store.state.ticks == 2)
        #expect(await store.stats().byAction["ticked"] == 2)
        await store.shutdown()
    }

    @Test func middlewareRefusal_undoesTheAction_andAnswersItsRequest() async throws {
        let recorder = PortRecorder()
        let seen = Locked<[String]>([])
        let store = makeStore(
            recorder,
            middleware: [
                .invariant { $0.value > 10 ? ServiceError(409, "too_big", "value over 10") : nil },
                .hook { record in seen.withLock { $0.append(record.name) } },
            ])
        await store.start()
        #expect(try value(await store.request { .addRequested($0, 10) }) == 10)
        let refused = await store.request { .addRequested($0, 1) }
        #expect(refused == .failure(ServiceError(409, "too_big", "value over 10")))
        #expect(await store.state.value == 10)
        let stats = await store.stats()
        #expect(stats.refused == 1)
        #expect(stats.actions == 2)
        #expect(seen.value == ["addRequested"])
        await store.shutdown()
    }

    @Test func syncEffects_runBeforeTheStateIsPublished() async throws {
        let recorder = PortRecorder()
        let lab = Lab(lookup: { [$0] })
        let store = Store(
            lab, initialState: Lab.State(), stateTopics: [.value("lab.saved", { $0.saved })],
            ports: StorePorts(
                publish: { topic, payload, _, _ in
                    // What a restart would find when this value is announced.
                    let value = String(decoding: payload, as: UTF8.self)
                    recorder.published.withLock {
                        $0.append(.init(topic: topic, payload: value, retain: true, causation: "\(lab.durable.value)"))
                    }
                }, restore: { _ in nil }), logger: Logger(label: "store-test", level: .critical))
        await store.start()
        await store.send(.savedDurably, cause: Cause(kind: .test, id: "1"))
        await store.shutdown()
        let announced = recorder.published.value.first { $0.payload == "1" }
        #expect(announced?.causation == "[1]")
    }

    @Test func aRequestTheReducerNeverAnswers_isAnswered504AfterItsTimeout() async throws {
        let store = makeStore(PortRecorder())
        await store.start()
        let result = await store.request(timeout: .milliseconds(50)) { .ignoredRequested($0) }
        #expect(result == .failure(ServiceError(504, "timeout", "the service did not answer within 0.05 seconds")))
        await store.shutdown()
        #expect(await store.request { .readRequested($0) } == .failure(ServiceError(503, "shutting_down", "the service is stopping")))
    }
}

/// An async gate a test opens or cancels; remembers whether the waiter was cancelled.
final class Gate: Sendable {
    private let state = Locked((waiting: false, cancelled: false))
    var waiting: Bool { state.value.waiting }
    var cancelled: Bool { state.value.cancelled }

    func wait() async throws {
        state.withLock { $0.waiting = true }
        do {
            try await Task.sleep(for: .seconds(60))
        } catch {
            state.withLock { $0.cancelled = true }
            throw error
        }
    }
}

/// Action names in logs and counters: the case, never the payload.
struct ActionNameTests {
    enum Inner: Sendable { case loginRequested(user: String, password: String), tick }
    enum Outer: Sendable { case auth(Inner), plain, withValues(Int, String) }

    @Test func name_isTheCasePath_withoutAssociatedValues() {
        #expect(ActionName.of(Outer.auth(.loginRequested(user: "ann", password: "hunter2"))) == "auth.loginRequested")
        #expect(ActionName.of(Outer.auth(.tick)) == "auth.tick")
        #expect(ActionName.of(Outer.plain) == "plain")
        #expect(ActionName.of(Outer.withValues(1, "secret")) == "withValues")
    }
}
