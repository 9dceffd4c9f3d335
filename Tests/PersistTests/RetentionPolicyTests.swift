import Testing

@testable import PersistCore

struct RetentionPolicyTests {
    @Test func parse_prefixesAgesAndCounts() throws {
        let policy = try RetentionPolicy(parsing: "feed.=7d:10000,auth.=30d:1000,*=12h:-")
        #expect(policy.rules.count == 3)
        #expect(policy.rule(for: "feed.post.voted") == .init(prefix: "feed.", maxAgeSeconds: 7 * 86_400, maxEvents: 10_000))
        #expect(policy.rule(for: "auth.state")?.maxEvents == 1000)
        #expect(policy.rule(for: "weather.now") == .init(prefix: "", maxAgeSeconds: 12 * 3600, maxEvents: nil))
        #expect(policy.description == "feed.=7d:10000,auth.=30d:1000,*=12h:-")
    }

    @Test func rule_longestPrefixWins() throws {
        let policy = try RetentionPolicy(parsing: "feed.=1d:10,feed.post.=-:5")
        #expect(policy.rule(for: "feed.post.voted")?.maxEvents == 5)
        #expect(policy.rule(for: "feed.comment")?.maxEvents == 10)
        #expect(policy.rule(for: "auth.state") == nil)
    }

    @Test(arguments: ["feed.", "feed.=7d", "feed.=7x:10", "feed.=7d:ten", "", "a.=1d:1,a.=2d:2"])
    func parse_whenMalformed_throwsNamingTheRule(text: String) {
        #expect(throws: RetentionPolicy.ParseError.self) { try RetentionPolicy(parsing: text) }
    }
}
