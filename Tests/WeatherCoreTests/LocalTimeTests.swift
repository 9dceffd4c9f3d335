import Foundation
import Testing

@testable import WeatherCore

struct LocalTimeTests {
    @Test func timestamp_acrossDaylightSavingChange_followsTheZone() throws {
        let zurich = LocalTime(timeZone: try #require(TimeZone(identifier: "Europe/Zurich")))
        let before = try #require(zurich.instant(ofLocal: "2025-03-30T01:00"))
        let after = try #require(zurich.instant(ofLocal: "2025-03-30T03:00"))
        #expect(zurich.timestamp(before) == "2025-03-30T01:00:00+01:00")
        #expect(zurich.timestamp(after) == "2025-03-30T03:00:00+02:00")
        #expect(after.timeIntervalSince(before) == 3600)
    }

    @Test func fixedOffset_formatsHalfHoursAndNegativeOffsets() throws {
        let india = LocalTime(offsetSeconds: 19_800)
        let instant = try #require(india.instant(ofLocal: "2025-01-01T00:00"))
        #expect(instant.timeIntervalSince1970 == 1_735_669_800)
        #expect(india.timestamp(instant) == "2025-01-01T00:00:00+05:30")
        #expect(LocalTime(offsetSeconds: -12_600).timestamp(instant) == "2024-12-31T15:00:00-03:30")
        #expect(LocalTime.utc.timestamp(instant) == "2024-12-31T18:30:00Z")
    }

    @Test(arguments: ["", "2025-01", "2025-01-01T12", "noon", "2025-01-01T12:xx"])
    func instant_whenTextIsNotALocalTime_returnsNil(text: String) {
        #expect(LocalTime.utc.instant(ofLocal: text) == nil)
    }
}
