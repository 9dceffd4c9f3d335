import Foundation
import Testing

@testable import EventCore

struct CivilDateTimeTests {
    private let newYork = TimeZone(identifier: "America/New_York")!

    private func wall(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> CivilDateTime {
        CivilDateTime(date: CivilDate(year: year, month: month, day: day), hour: hour, minute: minute, second: 0)
    }

    @Test func instant_whenWallTimeIsSkippedBySpringForward_usesTheOffsetBeforeTheGap() {
        // 02:30 on 9 March 2025 does not exist in New York; RFC 5545 reads it as 03:30 EDT.
        #expect(Fixture.iso(wall(2025, 3, 9, 2, 30).instant(in: newYork)) == "2025-03-09T07:30:00Z")
    }

    @Test func instant_whenWallTimeHappensTwice_takesTheFirst() {
        #expect(Fixture.iso(wall(2025, 11, 2, 1, 30).instant(in: newYork)) == "2025-11-02T05:30:00Z")
    }

    @Test func civilDate_dayNumbersAndWeekdays_matchTheCalendar() {
        #expect(CivilDate(year: 1970, month: 1, day: 1).dayNumber == 0)
        #expect(CivilDate(dayNumber: CivilDate(year: 2024, month: 2, day: 29).dayNumber) == CivilDate(year: 2024, month: 2, day: 29))
        #expect(CivilDate(year: 2025, month: 3, day: 1).weekday == 5)
        #expect(CivilDate(year: 1969, month: 12, day: 29).weekday == 0)
        #expect(!CivilDate(year: 2025, month: 2, day: 29).isValid)
    }

    @Test func duration_whenDaysCrossDST_keepsWallTime() throws {
        let start = wall(2025, 3, 8, 19, 0).instant(in: newYork)
        let duration = try #require(ICalendarDuration.parse("P1DT1H"))
        #expect(Fixture.iso(duration.added(to: start, in: newYork)) == "2025-03-10T00:00:00Z")
        #expect(ICalendarDuration.parse("PT") == nil && ICalendarDuration.parse("P1H") == nil)
        #expect(ICalendarDuration.parse("-P2W") == ICalendarDuration(isNegative: true, days: 14, seconds: 0))
    }
}
