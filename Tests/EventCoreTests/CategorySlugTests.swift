import Testing

@testable import EventCore

struct CategorySlugTests {
    @Test(arguments: [("Live Music", "live-music"), ("  NIGHTLIFE ", "nightlife"), ("Food & Drink!", "food-drink"), ("音乐", "音乐"), ("--", "")])
    func make_turnsTextIntoSlug(text: String, slug: String) {
        #expect(CategorySlug.make(text) == slug)
    }

    @Test func make_whenListRepeats_keepsFirstOrderWithoutEmpties() {
        #expect(CategorySlug.make(["Music", "music", "", "Live Music", "MUSIC"]) == ["music", "live-music"])
    }
}
