import Testing

@testable import Bus
@testable import BusKernel
@testable import BusSupport
@testable import BusWire
@testable import BusZMQ

/// The call graph's counters: a client's name comes from its first request; each request
/// counts once on its (caller, service) edge, whichever service the client called before.
struct BrokerCallsTests {
    let t0 = MonotonicTime.now

    func request(_ service: String, from client: [UInt8], caller: String?) -> Frames {
        [client, [], MDP.client, Array(service.utf8)]
            + RequestBody(method: "m", meta: RequestMeta(id: "r", caller: caller), payload: []).encode(oneFrame: true)
    }

    @Test func everyRequestCountsOnItsEdge_acrossServiceSwitchesAndClients() {
        var broker = Broker()
        let alice: [UInt8] = [0, 0, 0, 1]
        let anonymous: [UInt8] = [0, 0, 0, 2]
        for service in ["a", "a", "b", "a", "b", "b"] {
            _ = broker.receive(request(service, from: alice, caller: "alice"), now: t0)
        }
        // The name is taken from the first request only.
        _ = broker.receive(request("a", from: alice, caller: "renamed"), now: t0)
        _ = broker.receive(request("b", from: anonymous, caller: nil), now: t0)
        #expect(
            broker.calls == [
                CallEdge(caller: "alice", service: "a"): 4,
                CallEdge(caller: "alice", service: "b"): 3,
                CallEdge(caller: "client-00000002", service: "b"): 1,
            ])
    }
}
