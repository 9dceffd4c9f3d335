import Bus
import BusKernel
import Testing

struct PolicyTests {
    @Test func builtIn_letsOnlyFeedCallAuthToken() {
        let policy = Policy.builtIn
        #expect(policy.compiled(for: "feed").allows(.call, "auth.token"))
        for identity in ["weather", "events", "persist", "auth", "busctl", "rogue"] {
            #expect(!policy.compiled(for: identity).allows(.call, "auth.token"), "\(identity)")
        }
        #expect(policy.compiled(for: "feed").allows(.call, "auth.refresh"))
        #expect(!policy.compiled(for: "feed").allows(.call, "bus.reload"))
        #expect(policy.compiled(for: "feed").allows(.publish, "feed.user"))
        #expect(!policy.compiled(for: "feed").allows(.publish, "auth.state"))
    }

    @Test func builtIn_letsOnlyEventsCallEventsHandover() {
        let policy = Policy.builtIn
        #expect(policy.compiled(for: "events").allows(.call, "events.handover"))
        #expect(policy.compiled(for: "events").allows(.call, "events.list"))
        #expect(!policy.compiled(for: "events").allows(.call, "auth.token"))
        for identity in ["weather", "feed", "persist", "auth", "busctl", "rogue"] {
            #expect(!policy.compiled(for: identity).allows(.call, "events.handover"), "\(identity)")
            #expect(policy.compiled(for: identity).allows(.call, "events.list"), "\(identity)")
        }
    }
}
