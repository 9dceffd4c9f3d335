import Bus
import Testing

@testable import EventCore

struct TopicKeyTests {
    @Test func make_keepsValidTokens_andHashesAnythingElseIntoAValidToken() throws {
        #expect(TopicKey.make("alice") == "alice")
        #expect(TopicKey.make("jazz-night_2") == "jazz-night_2")
        let uid = TopicKey.make("party@example.org")
        #expect(uid.hasPrefix("party-example-org--"))
        #expect(uid.count == "party-example-org--".count + 16)
        let occurrence = TopicKey.make("series@x#20250301T120000Z")
        #expect(occurrence.hasPrefix("series-x-20250301t120000z--"))
        #expect(TopicKey.make("Alice") != TopicKey.make("alice"))
        #expect(TopicKey.make("a--b") != "a--b")
        #expect(TopicKey.make("@@@").hasPrefix("x--"))
        // The hash checked against FNV-1a 64 computed independently (Python).
        #expect(
            TopicKey.make("sample-cinema@events.swiftbus.sample#20261215T200000Z") == "sample-cinema-events-le-20261215t200000z--06a197387ff09add")
        #expect(TopicKey.make(String(repeating: "é", count: 300)).count <= 60)
        for text in ["party@example.org", "series@x#20250301T120000Z", "Alice", "a--b", "@@@", String(repeating: "z", count: 200), "音乐"] {
            try Topic.validate("events.item." + TopicKey.make(text))
        }
    }

    @Test func make_isStable_andDistinguishesNearTexts() {
        #expect(TopicKey.make("party@example.org") == TopicKey.make("party@example.org"))
        #expect(TopicKey.make("party@example.org") != TopicKey.make("party@example.com"))
        #expect(TopicKey.make("x#20250301T120000Z") != TopicKey.make("x#20250308T120000Z"))
    }
}
