import Foundation
import Testing

@testable import EventCore

struct EventCodableTests {
    @Test func encode_usesSnakeCaseKeysAndISOInstants() throws {
        let event = try #require(try Fixture.importFixture("jazz-weekly.ics").events.first)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try #require(String(data: try encoder.encode(event), encoding: .utf8))
        for fragment in [
            #""all_day":false"#, #""starts_at":"2025-03-01T12:00:00Z""#, #""ends_at":"2025-03-01T15:00:00Z""#,
            #""recurrence_id":"2025-03-01T12:00:00Z""#, #""time_zone":"Asia\/Shanghai""#, #""like_count":0"#, #""going_count":0"#,
            #""waitlist_count":0"#, #""capacity":80"#, #""status":"scheduled""#,
            #""location":{"lat":31.2105,"lon":121.444,"name":"JZ Club, 46 Fuxing Road"}"#,
        ] {
            #expect(json.contains(fragment), "missing \(fragment) in \(json)")
        }
        #expect(try JSONDecoder().decode(Event.self, from: try encoder.encode(event)) == event)
    }

    @Test func decode_whenInstantIsNotISO_throws() {
        let json =
            #"{"id":"a","uid":"a","sequence":0,"title":"t","categories":[],"starts_at":"yesterday","ends_at":"2025-03-01T12:00:00Z","all_day":false,"status":"scheduled"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Event.self, from: Data(json.utf8)) }
    }

    @Test func decode_whenCountsAndOptionalsAreAbsent_defaults() throws {
        let json =
            #"{"id":"a","uid":"a","sequence":0,"title":"t","categories":[],"starts_at":"2025-03-01T12:00:00Z","ends_at":"2025-03-01T12:00:00Z","all_day":false,"status":"cancelled"}"#
        let event = try JSONDecoder().decode(Event.self, from: Data(json.utf8))
        #expect(event.status == .cancelled)
        #expect(event.recurrenceID == nil && event.timeZone == nil && event.goingCount == 0)
    }
}
