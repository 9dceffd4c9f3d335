import Foundation
import Testing

@testable import EventCore

struct RecurrenceExpansionTests {
    private func starts(_ uid: String, in result: ICalendarImportResult) -> [String] {
        result.events.filter { $0.uid == uid + "@events.swiftbus.test" }.map { Fixture.iso($0.startsAt) }
    }

    @Test func expand_whenDailyUntil_includesTheUntilInstant() throws {
        let result = try Fixture.importFixture("recurring.ics")
        #expect(
            starts("daily", in: result) == [
                "2025-04-28T06:30:00Z", "2025-04-29T06:30:00Z", "2025-04-30T06:30:00Z", "2025-05-01T06:30:00Z", "2025-05-02T06:30:00Z",
            ])
    }

    @Test func expand_whenWeeklyByDayWithCount_takesTheListedWeekdays() throws {
        let result = try Fixture.importFixture("recurring.ics")
        // 12:00 in Berlin (CEST, UTC+2) on Mon/Wed/Fri from 7 April.
        #expect(
            starts("mwf", in: result) == [
                "2025-04-07T10:00:00Z", "2025-04-09T10:00:00Z", "2025-04-11T10:00:00Z", "2025-04-14T10:00:00Z", "2025-04-16T10:00:00Z",
                "2025-04-18T10:00:00Z",
            ])
    }

    @Test func expand_whenWeeklyCrossesDST_keepsLocalWallTimeAndAppliesExdateAndOverride() throws {
        let result = try Fixture.importFixture("recurring.ics")
        let quiz = result.events.filter { $0.uid == "dst-weekly@events.swiftbus.test" }
        // 19:00 New York: EST (UTC-5) until 9 March, EDT (UTC-4) after; 11 March is an EXDATE,
        // 18 March is moved to 19 March 20:00 by its RECURRENCE-ID override.
        #expect(
            quiz.map { Fixture.iso($0.startsAt) } == [
                "2025-02-26T00:00:00Z", "2025-03-05T00:00:00Z", "2025-03-20T00:00:00Z", "2025-03-25T23:00:00Z", "2025-04-01T23:00:00Z",
            ])
        let moved = quiz[2]
        #expect(moved.title == "Pub quiz (moved)")
        #expect(moved.sequence == 1)
        #expect(moved.id == "dst-weekly@events.swiftbus.test#20250318T230000Z")
        #expect(moved.recurrenceID.map(Fixture.iso) == "2025-03-18T23:00:00Z")
        let zone = try #require(TimeZone(identifier: "America/New_York"))
        let wallTimes = quiz.filter { $0.title == "Pub quiz" }.map { CivilDateTime(instant: $0.startsAt, in: zone) }
        #expect(wallTimes.allSatisfy { $0.hour == 19 && $0.minute == 0 })
        #expect(quiz.allSatisfy { $0.endsAt.timeIntervalSince($0.startsAt) == 7200 })
    }

    @Test func expand_whenMonthlyLastFriday_findsTheLastFridays() throws {
        let result = try Fixture.importFixture("recurring.ics")
        #expect(
            starts("last-friday", in: result) == [
                "2025-01-31T10:00:00Z", "2025-02-28T10:00:00Z", "2025-03-28T10:00:00Z", "2025-04-25T10:00:00Z",
            ])
    }

    @Test func expand_whenMonthlyFirstMondayUntil_stopsAtUntil() throws {
        let result = try Fixture.importFixture("recurring.ics")
        #expect(
            starts("first-monday", in: result) == [
                "2025-01-06T11:00:00Z", "2025-02-03T11:00:00Z", "2025-03-03T11:00:00Z", "2025-04-07T11:00:00Z", "2025-05-05T11:00:00Z",
            ])
    }

    @Test func expand_whenMonthlyByMonthDay_takesPositiveAndNegativeDays() throws {
        let result = try Fixture.importFixture("recurring.ics")
        #expect(
            starts("month-days", in: result) == [
                "2025-01-15T09:00:00Z", "2025-01-31T09:00:00Z", "2025-02-15T09:00:00Z", "2025-02-28T09:00:00Z", "2025-03-15T09:00:00Z",
            ])
    }

    @Test func expand_whenAllDayEveryOtherWeekWithExdate_countsTheExcludedDate() throws {
        let result = try Fixture.importFixture("recurring.ics")
        let market = result.events.filter { $0.uid == "fortnight@events.swiftbus.test" }
        #expect(market.map(\.id) == ["fortnight@events.swiftbus.test#20250601", "fortnight@events.swiftbus.test#20250629"])
        #expect(market.map { Fixture.iso($0.endsAt) } == ["2025-06-02T00:00:00Z", "2025-06-30T00:00:00Z"])
        #expect(market.allSatisfy { $0.allDay })
    }

    @Test func expand_whenRangeIsNarrow_keepsOnlyOverlappingOccurrencesAndStillCountsEarlierOnes() throws {
        let options = ICalendarImportOptions(
            expansionRange: Fixture.instant("2025-03-08T13:00:00Z")..<Fixture.instant("2025-03-22T12:00:00Z"))
        let result = try Fixture.importFixture("jazz-weekly.ics", options: options)
        // The 8 March night (12:00-15:00Z) overlaps the range start; 22 March starts at its exclusive end.
        #expect(result.events.map { Fixture.iso($0.startsAt) } == ["2025-03-08T12:00:00Z", "2025-03-15T12:00:00Z"])
    }

    @Test func expand_whenRuleIsEndless_stopsAtTheRangeEnd() throws {
        let options = ICalendarImportOptions(expansionRange: Fixture.instant("2025-01-01T00:00:00Z")..<Fixture.instant("2025-02-01T00:00:00Z"))
        let result = try Fixture.importText(
            Fixture.calendar([
                "BEGIN:VEVENT", "UID:endless", "DTSTART:20200103T090000Z", "RRULE:FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=3", "END:VEVENT",
            ]), options: options)
        #expect(result.events.map { Fixture.iso($0.startsAt) } == ["2025-01-03T09:00:00Z"])
    }

    @Test func expand_whenMonthLacksTheDay_skipsThatMonth() throws {
        let result = try Fixture.importText(
            Fixture.calendar(["BEGIN:VEVENT", "UID:31", "DTSTART:20250131T090000Z", "RRULE:FREQ=MONTHLY;COUNT=3", "END:VEVENT"]))
        #expect(result.events.map { Fixture.iso($0.startsAt) } == ["2025-01-31T09:00:00Z", "2025-03-31T09:00:00Z", "2025-05-31T09:00:00Z"])
    }

    @Test func expand_whenDailyByDayFilter_keepsWeekdays() throws {
        let result = try Fixture.importText(
            Fixture.calendar([
                "BEGIN:VEVENT", "UID:wd", "DTSTART:20250103T090000Z", "RRULE:FREQ=DAILY;COUNT=4;BYDAY=MO,TU,WE,TH,FR", "END:VEVENT",
            ]))
        #expect(
            result.events.map { Fixture.iso($0.startsAt) } == [
                "2025-01-03T09:00:00Z", "2025-01-06T09:00:00Z", "2025-01-07T09:00:00Z", "2025-01-08T09:00:00Z",
            ])
    }

    @Test func expand_whenWeekStartIsSunday_groupsWeeksFromSunday() throws {
        // RFC 5545's WKST example: with WKST=SU the second occurrence pair falls two weeks later.
        let base = ["BEGIN:VEVENT", "UID:wk", "DTSTART:19970805T090000Z"]
        let monday = try Fixture.importText(
            Fixture.calendar(base + ["RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO", "END:VEVENT"]),
            options: ICalendarImportOptions(expansionRange: Fixture.instant("1997-01-01T00:00:00Z")..<Fixture.instant("1998-01-01T00:00:00Z")))
        let sunday = try Fixture.importText(
            Fixture.calendar(base + ["RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU", "END:VEVENT"]),
            options: ICalendarImportOptions(expansionRange: Fixture.instant("1997-01-01T00:00:00Z")..<Fixture.instant("1998-01-01T00:00:00Z")))
        #expect(monday.events.map { String(Fixture.iso($0.startsAt).prefix(10)) } == ["1997-08-05", "1997-08-10", "1997-08-19", "1997-08-24"])
        #expect(sunday.events.map { String(Fixture.iso($0.startsAt).prefix(10)) } == ["1997-08-05", "1997-08-17", "1997-08-19", "1997-08-31"])
    }

    @Test func parse_whenRuleIsMalformed_throwsWithLine() {
        let lines = Fixture.calendar([
            "BEGIN:VEVENT", "UID:r", "DTSTART:20250101T090000Z", "RRULE:FREQ=WEEKLY;COUNT=3;UNTIL=20250301T000000Z", "END:VEVENT",
        ])
        #expect(throws: ICalendarError(line: 7, message: "RRULE has both COUNT and UNTIL")) { try Fixture.importText(lines) }
        let bad = Fixture.calendar(["BEGIN:VEVENT", "UID:r", "DTSTART:20250101T090000Z", "RRULE:FREQ=FORTNIGHTLY", "END:VEVENT"])
        #expect(throws: ICalendarError(line: 7, message: "RRULE FREQ 'FORTNIGHTLY' is not a frequency")) { try Fixture.importText(bad) }
    }

    @Test func parse_whenOrdinalWithWeekly_isSkippedNotGuessed() throws {
        let result = try Fixture.importText(
            Fixture.calendar(["BEGIN:VEVENT", "UID:o", "DTSTART:20250101T090000Z", "RRULE:FREQ=WEEKLY;BYDAY=1MO", "END:VEVENT"]))
        #expect(result.events.isEmpty)
        #expect(result.skipped.map(\.reason) == ["unsupported RRULE BYDAY 1MO with FREQ=WEEKLY (ordinals need FREQ=MONTHLY)"])
    }

    // Regression (corpus Tests/FuzzCorpus/icalendar/regression-interval-*): a huge INTERVAL
    // overflowed the expander's day arithmetic and trapped.
    @Test(arguments: ["DAILY", "WEEKLY", "MONTHLY"])
    func importEvents_whenIntervalBeyondBound_throws(frequency: String) {
        let lines = Fixture.calendar([
            "BEGIN:VEVENT", "UID:r", "DTSTART:20250301T100000Z", "RRULE:FREQ=\(frequency);INTERVAL=922337203685477580", "END:VEVENT",
        ])
        #expect(throws: ICalendarError(line: 7, message: "RRULE INTERVAL '922337203685477580' is not an integer from 1 to 10000")) {
            try Fixture.importText(lines)
        }
    }
}
