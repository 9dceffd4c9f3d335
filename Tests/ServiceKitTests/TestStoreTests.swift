import Bus
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

/// The test store: a passing exhaustive run, and each failure it must report.
@MainActor
struct TestStoreTests {
    /// Collects what the store reports instead of failing the test, so a test can check that
    /// a failure was reported.
    final class Reports {
        var messages: [String] = []
    }

    func makeStore(
        _ reports: Reports? = nil, lookup: @escaping @Sendable (String) async throws -> [String] = { [$0.uppercased()] }
    )
        -> TestStore<Lab>
    {
        TestStore(
            Lab(lookup: lookup), initialState: Lab.State(), stateTopics: Lab.topics,
            reportIssue: reports.map { reports in { message, _ in reports.messages.append(message) } })
    }

    @Test func exhaustiveRun_passes() async {
        let store = makeStore()
        let id = await store.send(request: { .addRequested($0, 2) }) { $0.value = 2 }
        store.expectReply(id, Lab.Value(value: 2))
        await store.send(.searchSubmitted("zur")) { $0.query = "zur" }
        await store.receive(.resultsLoaded("zur", ["ZUR"])) { $0.results = ["ZUR"] }
        await store.send(.announced("hi"))
        store.expectPublish("lab.announced", ["text": "hi"])
        await store.send(.tickingChanged(true)) { $0.ticking = true }
        await store.advance(by: .seconds(30))
        await store.receive(.ticked) { $0.ticks = 1 }
        await store.send(.tickingChanged(false)) { $0.ticking = false }
        #expect(store.statePublishes.map(\.topic) == ["lab.state"])
        await store.finish()
    }

    @Test func searchFailure_isSentBackAsAnAction() async {
        struct Down: Error {}
        let store = makeStore { _ in throw Down() }
        await store.send(.searchSubmitted("par")) { $0.query = "par" }
        await store.receive(.searchFailed("par"))
        await store.finish()
    }

    @Test func anUnassertedStateChange_fails() async {
        let reports = Reports()
        let store = makeStore(reports)
        await store.send(request: { .addRequested($0, 5) })
        #expect(reports.messages.count == 1)
        #expect(reports.messages.first?.contains("is not what the test expected") == true)
        await store.finish()
    }

    @Test func anActionSentBackButNotReceived_fails() async {
        let reports = Reports()
        let store = makeStore(reports)
        await store.send(.searchSubmitted("zur")) { $0.query = "zur" }
        await store.finish()
        #expect(reports.messages.contains { $0.contains("not received before finishing") && $0.contains("resultsLoaded") })
    }

    @Test func anEffectStillRunningAtTheEnd_fails() async {
        let reports = Reports()
        let store = makeStore(reports) { _ in
            try await Task.sleep(for: .seconds(60))
            return []
        }
        await store.send(.searchSubmitted("slow")) { $0.query = "slow" }
        await store.finish(timeout: .milliseconds(50))
        #expect(reports.messages == ["1 effect(s) still running: search"])
    }

    @Test func aPublishTheTestDidNotExpect_fails() async {
        let reports = Reports()
        let store = makeStore(reports)
        await store.send(.announced("surprise"))
        await store.finish()
        #expect(reports.messages == ["1 publish(es) not checked: lab.announced"])
    }

    @Test func receivingTheWrongAction_fails() async {
        let reports = Reports()
        let store = makeStore(reports)
        await store.send(.searchSubmitted("zur")) { $0.query = "zur" }
        await store.receive(.searchFailed("zur")) { $0.results = ["ZUR"] }
        #expect(reports.messages.count == 1)
        #expect(reports.messages.first?.hasPrefix("received resultsLoaded(\"zur\", [\"ZUR\"])") == true)
        await store.finish()
    }

    @Test func middlewareRefusal_answersTheRequest_andKeepsTheState() async {
        let store = TestStore(
            Lab(lookup: { [$0] }), initialState: Lab.State(),
            middleware: [.invariant { $0.value < 0 ? ServiceError(409, "negative", "the value may not go below zero") : nil }])
        let id = await store.send(request: { .addRequested($0, -1) })
        store.expectFailure(id, status: 409, code: "negative")
        #expect(store.lastRefusal?.code == "negative")
        await store.finish()
    }
}
