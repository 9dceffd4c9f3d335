import Foundation
import Testing

@testable import EventCore

struct ICalendarImporterTests {
    @Test func importEvents_whenJazzFixture_readsEveryField() throws {
        let result = try Fixture.importFixture("jazz-weekly.ics")
        #expect(result.skipped.isEmpty)
        let first = try #require(result.events.first)
        #expect(first.uid == "jazz-night@events.swiftbus.test")
        #expect(first.id == "jazz-night@events.swiftbus.test#20250301T120000Z")
        #expect(first.title == "Jazz night")
        #expect(first.location == EventLocation(name: "JZ Club, 46 Fuxing Road", lat: 31.2105, lon: 121.444))
        #expect(first.categories == ["music", "nightlife"])
        #expect(first.status == .scheduled)
        #expect(first.capacity == 80)
        #expect(first.timeZone == "Asia/Shanghai")
        #expect(first.allDay == false)
        #expect(Fixture.iso(first.startsAt) == "2025-03-01T12:00:00Z")
        #expect(Fixture.iso(first.endsAt) == "2025-03-01T15:00:00Z")
        #expect(first.likeCount == 0 && first.goingCount == 0 && first.waitlistCount == 0)
        #expect(
            result.events.map { Fixture.iso($0.startsAt) } == [
                "2025-03-01T12:00:00Z", "2025-03-08T12:00:00Z", "2025-03-15T12:00:00Z", "2025-03-22T12:00:00Z",
            ])
    }

    @Test func importEvents_whenTextFoldsAndEscapes_readsTheOriginalText() throws {
        let event = try #require(try Fixture.importFixture("text.ics").events.first)
        #expect(event.title == "上海外滩灯光秀 🎆 Bund light show; fireworks, music \\ and more — 一起来看吧！一起来看吧！")
        let description = try #require(event.description)
        #expect(description.hasPrefix("Line one\nLine two; with a semicolon, a comma and a backslash \\ here.\n第三行"))
        #expect(description.hasSuffix("而不拆开多字节字符。"))
        #expect(event.location?.name == "外滩, 中山东一路")
        #expect(event.location?.lat == nil)
        #expect(event.categories == ["festival", "outdoor", "live-music"])
        #expect(event.url == "https://events.swiftbus.test/e/text?x=1&y=2")
        #expect(event.id == "text@events.swiftbus.test")
        #expect(event.recurrenceID == nil)
    }

    @Test func importEvents_whenTimesFixture_placesEachKindOfTime() throws {
        let result = try Fixture.importFixture("times.ics")
        #expect(result.skipped.isEmpty)
        let byUID = Dictionary(uniqueKeysWithValues: result.events.map { ($0.uid, $0) })
        func check(_ uid: String, _ start: String, _ end: String, zone: String?, allDay: Bool = false) throws {
            let event = try #require(byUID[uid + "@events.swiftbus.test"])
            #expect(Fixture.iso(event.startsAt) == start, "\(uid) start")
            #expect(Fixture.iso(event.endsAt) == end, "\(uid) end")
            #expect(event.timeZone == zone, "\(uid) zone")
            #expect(event.allDay == allDay, "\(uid) all-day")
        }
        try check("utc", "2025-06-02T09:30:00Z", "2025-06-02T10:45:00Z", zone: nil)
        try check("new-york", "2025-07-05T00:00:00Z", "2025-07-05T02:00:00Z", zone: "America/New_York")
        try check("floating", "2025-06-07T07:00:00Z", "2025-06-07T08:00:00Z", zone: nil)
        try check("all-day", "2025-05-31T00:00:00Z", "2025-06-01T00:00:00Z", zone: nil, allDay: true)
        try check("multi-day", "2025-09-05T00:00:00Z", "2025-09-08T00:00:00Z", zone: nil, allDay: true)
        try check("duration", "2025-08-01T12:00:00Z", "2025-08-01T13:30:00Z", zone: "Europe/Berlin")
        #expect(byUID["new-york@events.swiftbus.test"]?.capacity == 120)
        #expect(byUID["cancelled@events.swiftbus.test"]?.status == .cancelled)
        #expect(byUID["cancelled@events.swiftbus.test"]?.sequence == 2)
        #expect(byUID["tentative@events.swiftbus.test"]?.status == .scheduled)
    }

    @Test func importEvents_whenFloatingZoneIsGiven_readsFloatingTimesThereAndKeepsTheZone() throws {
        var options = Fixture.options
        options.floatingTimeZone = try #require(TimeZone(identifier: "Asia/Shanghai"))
        let result = try Fixture.importFixture("times.ics", options: options)
        let run = try #require(result.events.first { $0.uid == "floating@events.swiftbus.test" })
        #expect(Fixture.iso(run.startsAt) == "2025-06-06T23:00:00Z")
        #expect(run.timeZone == "Asia/Shanghai")
        let allDay = try #require(result.events.first { $0.uid == "all-day@events.swiftbus.test" })
        #expect(Fixture.iso(allDay.startsAt) == "2025-05-31T00:00:00Z")
        #expect(allDay.timeZone == nil)
    }

    @Test func importEvents_whenVEventsCannotBeUsed_skipsEachWithItsReason() throws {
        let result = try Fixture.importFixture("skips.ics")
        #expect(result.events.map(\.uid) == ["kept@events.swiftbus.test"])
        #expect(
            result.skipped.map(\.reason) == [
                "missing UID", "missing DTSTART", "unsupported RRULE part BYSETPOS", "unsupported RRULE FREQ=YEARLY",
                "TZID 'Mars/Olympus_Mons' is not a known IANA time zone",
            ])
        #expect(result.skipped.map(\.line) == [4, 9, 14, 21, 34])
        #expect(result.skipped[1].uid == "no-start@events.swiftbus.test")
        #expect(result.skipped[1].description == "line 9: VEVENT 'no-start@events.swiftbus.test' skipped: missing DTSTART")
    }

    @Test(arguments: [
        ("end-without-begin.ics", 5, "END:VEVENT without BEGIN:VEVENT"),
        ("bad-date.ics", 7, "DTSTART value '2025-13-01' is not a date"),
        ("folded-bad-time.ics", 8, "DTSTART value '20250301T256000' is not a date-time"),
        ("unclosed.ics", 8, "END:VCALENDAR while BEGIN:VEVENT at line 4 is still open"),
        ("error-after-valid.ics", 15, "GEO value '31.2;east' is not 'latitude;longitude' in degrees"),
        ("missing-colon.ics", 6, "SUMMARY has no ':' before its value"),
        ("not-utf8.ics", 6, "content line is not valid UTF-8"),
    ])
    func importEvents_whenFileIsMalformed_throwsTheLineAndWhy(name: String, line: Int, message: String) throws {
        let data = try Fixture.data("malformed/" + name)
        #expect(throws: ICalendarError(line: line, message: message)) {
            try ICalendarImporter.importEvents(from: data, options: Fixture.options)
        }
    }

    @Test func importEvents_whenComponentIsNeverClosed_namesItsBeginLine() {
        let lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "BEGIN:VEVENT", "UID:x", "DTSTART:20250301T120000Z"]
        #expect(throws: ICalendarError(line: 3, message: "BEGIN:VEVENT is never closed by END:VEVENT")) {
            try Fixture.importText(lines)
        }
    }

    @Test func importEvents_whenErrorFollowsValidEvents_returnsOnlyTheError() throws {
        let good = try Fixture.importText(Fixture.calendar(["BEGIN:VEVENT", "UID:a", "DTSTART:20250301T120000Z", "END:VEVENT"]))
        #expect(good.events.count == 1)
        let lines = Fixture.calendar([
            "BEGIN:VEVENT", "UID:a", "DTSTART:20250301T120000Z", "END:VEVENT",
            "BEGIN:VEVENT", "DTSTART:20250302T120000Z", "SEQUENCE:two", "END:VEVENT",
        ])
        #expect(throws: ICalendarError(line: 10, message: "SEQUENCE value 'two' is not a non-negative integer")) {
            try Fixture.importText(lines)
        }
    }

    @Test func importEvents_whenDocumentHasNoCalendar_throws() {
        #expect(throws: ICalendarError(line: 1, message: "BEGIN:VEVENT outside BEGIN:VCALENDAR")) {
            try Fixture.importText(["BEGIN:VEVENT", "END:VEVENT"])
        }
        #expect(throws: ICalendarError(line: 1, message: "no BEGIN:VCALENDAR in the document")) {
            try ICalendarImporter.importEvents(from: "", options: Fixture.options)
        }
    }

    @Test func importEvents_whenAllDayEventHasNoEnd_lastsOneDay() throws {
        let result = try Fixture.importText(Fixture.calendar(["BEGIN:VEVENT", "UID:d", "DTSTART;VALUE=DATE:20251231", "END:VEVENT"]))
        let event = try #require(result.events.first)
        #expect(Fixture.iso(event.startsAt) == "2025-12-31T00:00:00Z")
        #expect(Fixture.iso(event.endsAt) == "2026-01-01T00:00:00Z")
        #expect(event.allDay)
    }

    @Test func importEvents_whenEventHasAlarmAndUnknownProperties_ignoresThem() throws {
        let result = try Fixture.importText(
            Fixture.calendar([
                "BEGIN:VEVENT", "UID:alarm", "DTSTART:20250301T120000Z", "X-WR-SOMETHING;X-P=1:ignored", "ORGANIZER;CN=Me:mailto:me@x.test",
                "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT15M", "DESCRIPTION:Reminder", "END:VALARM", "SUMMARY:Title",
                "END:VEVENT",
            ]))
        #expect(result.events.map(\.title) == ["Title"])
        #expect(result.events.first?.description == nil)
    }

    @Test func importEvents_whenUIDRepeats_skipsTheLaterOne() throws {
        let result = try Fixture.importText(
            Fixture.calendar([
                "BEGIN:VEVENT", "UID:dup", "DTSTART:20250301T120000Z", "SUMMARY:first", "END:VEVENT",
                "BEGIN:VEVENT", "UID:dup", "DTSTART:20250302T120000Z", "SUMMARY:second", "END:VEVENT",
            ]))
        #expect(result.events.map(\.title) == ["first"])
        #expect(result.skipped == [ICalendarImportSkip(line: 9, uid: "dup", reason: "duplicate UID (first at line 4)")])
    }

    @Test func importEvents_whenSingularPropertyRepeats_throws() {
        let lines = Fixture.calendar(["BEGIN:VEVENT", "UID:a", "DTSTART:20250301T120000Z", "DTSTART:20250302T120000Z", "END:VEVENT"])
        #expect(throws: ICalendarError(line: 7, message: "DTSTART appears again in a VEVENT (first at line 6)")) {
            try Fixture.importText(lines)
        }
    }

    @Test func importEvents_whenDTEndPrecedesStartOrKindsDiffer_skips() throws {
        let result = try Fixture.importText(
            Fixture.calendar([
                "BEGIN:VEVENT", "UID:a", "DTSTART:20250301T120000Z", "DTEND:20250301T110000Z", "END:VEVENT",
                "BEGIN:VEVENT", "UID:b", "DTSTART;VALUE=DATE:20250301", "DTEND:20250302T000000Z", "END:VEVENT",
                "BEGIN:VEVENT", "UID:c", "DTSTART:20250301T120000Z", "DTEND:20250301T130000Z", "DURATION:PT1H", "END:VEVENT",
            ]))
        #expect(result.events.isEmpty)
        #expect(
            result.skipped.map(\.reason) == [
                "DTEND is before DTSTART", "DTEND is a date-time but DTSTART is a date", "has both DTEND and DURATION",
            ])
    }

    @Test func importEvents_whenPostponedXStatus_isPostponed() throws {
        let result = try Fixture.importText(
            Fixture.calendar([
                "BEGIN:VEVENT", "UID:p", "DTSTART:20250301T120000Z", "STATUS:TENTATIVE", "X-SWIFTBUS-STATUS:POSTPONED", "END:VEVENT",
            ]))
        #expect(result.events.first?.status == .postponed)
    }

    // Regression (corpus Tests/FuzzCorpus/icalendar/regression-duration-*): the weeks, hours or
    // days of a huge DURATION overflowed `Int` and trapped.
    @Test(arguments: ["P2000000000000000000W", "PT3000000000000000H", "P9000000000000000000D", "P1000001D"])
    func importEvents_whenDurationBeyondBound_throws(duration: String) {
        let lines = Fixture.calendar(["BEGIN:VEVENT", "UID:long", "DTSTART:20250301T100000Z", "DURATION:\(duration)", "END:VEVENT"])
        #expect(throws: ICalendarError(line: 7, message: "DURATION value '\(duration)' is not a duration like PT1H30M")) {
            try Fixture.importText(lines)
        }
    }

    @Test func importEvents_whenDurationAtBound_imports() throws {
        let result = try Fixture.importText(
            Fixture.calendar(["BEGIN:VEVENT", "UID:long", "DTSTART:20250301T100000Z", "DURATION:P1000000D", "END:VEVENT"]))
        #expect(result.events.map(\.uid) == ["long"])
    }
}
