import FeedCore
import Testing

struct RedditNamesTests {
    @Test(arguments: ["swift", "iOSProgramming", "A_1", "ab", "abcdefghijklmnopqrstu", "swift+iOSProgramming"])
    func subreddit_whenValid_returnsName(_ name: String) throws {
        #expect(try RedditNames.subreddit(name) == name)
    }

    @Test(arguments: ["", "a", "abcdefghijklmnopqrstuv", "swift ui", "r/swift", "swift+", "+swift", "sw%69ft", "swïft", "swift?x=1", "a/../b"])
    func subreddit_whenInvalid_throwsInvalidInput(_ name: String) {
        #expect(
            throws: RedditError.invalidInput(field: "subreddit", value: name, rule: "2 to 21 letters, digits or underscores (several joined by +)")
        ) {
            try RedditNames.subreddit(name)
        }
    }

    @Test func fullname_whenKindsRestricted_acceptsOnlyThose() throws {
        #expect(try RedditNames.fullname("t3_1abc1", kinds: ["t1", "t3"]) == "t3_1abc1")
        #expect(throws: RedditError.self) { try RedditNames.fullname("t5_2qh0u", kinds: ["t1", "t3"]) }
        #expect(throws: RedditError.self) { try RedditNames.fullname("t3_") }
        #expect(throws: RedditError.self) { try RedditNames.fullname("t3_ABC") }
        #expect(throws: RedditError.self) { try RedditNames.fullname("1abc1") }
    }

    @Test func bareID_whenFullnameOrID_returnsID() throws {
        #expect(try RedditNames.bareID("t3_1abc1", kind: "t3", field: "post") == "1abc1")
        #expect(try RedditNames.bareID("1abc1", kind: "t3", field: "post") == "1abc1")
        #expect(throws: RedditError.self) { try RedditNames.bareID("t1_c1", kind: "t3", field: "post") }
        #expect(throws: RedditError.self) { try RedditNames.bareID("1abc1/../x", kind: "t3", field: "post") }
    }

    @Test func username_whenInvalid_throws() throws {
        #expect(try RedditNames.username("some-user_9") == "some-user_9")
        #expect(throws: RedditError.self) { try RedditNames.username("") }
        #expect(throws: RedditError.self) { try RedditNames.username("bad name") }
        #expect(throws: RedditError.self) { try RedditNames.username("abcdefghijklmnopqrstu") }
    }

    @Test func sortParsing_whenTimeOnWrongSort_throws() throws {
        #expect(try ListingSort(name: "top") == .top(.day))
        #expect(try ListingSort(name: "controversial", time: "hour") == .controversial(.hour))
        #expect(try ListingSort(name: "rising") == .rising)
        #expect(throws: RedditError.invalidInput(field: "t", value: "week", rule: "only top and controversial take a time range")) {
            try ListingSort(name: "hot", time: "week")
        }
        #expect(throws: RedditError.self) { try ListingSort(name: "top", time: "decade") }
        #expect(throws: RedditError.self) { try ListingSort(name: "gilded") }
        #expect(try CommentSort(parsing: "best") == .confidence)
        #expect(throws: RedditError.self) { try CommentSort(parsing: "hot") }
    }

    @Test func userAgent_whenPartHasColonOrBadName_throws() {
        #expect(throws: RedditError.self) { try RedditUserAgent(platform: "linux", appID: "a:b", version: "1", username: "x") }
        #expect(throws: RedditError.self) { try RedditUserAgent(platform: "linux", appID: "app", version: "1 2", username: "x") }
        #expect(throws: RedditError.self) { try RedditUserAgent(platform: "linux", appID: "app", version: "1", username: "no spaces") }
    }
}
