import Bus
import Testing

struct TopicPatternTests {
    @Test(arguments: [
        ("auth.state", "auth.state", true),
        ("auth.state", "auth.states", false),
        ("auth.*", "auth.state", true),
        ("auth.*", "auth.state.changed", false),
        ("feed.*.voted", "feed.post.voted", true),
        ("feed.*.voted", "feed.post.created", false),
        ("feed.>", "feed.post.voted", true),
        ("feed.>", "feed", false),
        (">", "anything.at.all", true),
        ("*", "auth", true),
        ("*", "auth.state", false),
    ])
    func matches(pattern: String, topic: String, expected: Bool) throws {
        #expect(try TopicPattern(pattern).matches(topic) == expected)
    }

    @Test func wirePrefix_isTheLiteralHead() throws {
        #expect(try TopicPattern("auth.state").wirePrefix == Array("auth.state".utf8))
        #expect(try TopicPattern("feed.*.voted").wirePrefix == Array("feed.".utf8))
        #expect(try TopicPattern("feed.>").wirePrefix == Array("feed.".utf8))
        #expect(try TopicPattern(">").wirePrefix == [])
    }

    @Test(arguments: ["feed..x", "feed.>.x", "Feed.post", "feed.po st", "feed.", ".feed"])
    func invalidPatterns_throw(pattern: String) {
        #expect(throws: BusError.self) { try TopicPattern(pattern) }
    }

    @Test func validate_rejectsWildcardsAndLongTopics() {
        #expect(throws: BusError.self) { try Topic.validate("auth.*") }
        #expect(throws: BusError.self) { try Topic.validate(String(repeating: "a", count: 256)) }
        #expect(throws: BusError.self) { try Topic.validate("") }
        #expect(throws: Never.self) { try Topic.validate("weather.forecast.updated") }
    }
}
