import Foundation

/// A local event as the `events` service stores and serves it.
///
/// Time: `starts_at` and `ends_at` are instants (`ends_at` exclusive, as iCalendar's `DTEND`).
/// A timed event keeps the IANA zone it was announced in as `time_zone` so export writes the
/// same wall time; `time_zone` is nil for an event given in UTC. Floating iCalendar times (no
/// `Z`, no `TZID`) are read in ``ICalendarImportOptions/floatingTimeZone`` and keep that zone
/// (nil when it is UTC). An all-day event (`all_day`) has no zone: its dates float, and
/// `starts_at`/`ends_at` are the UTC midnights of the first day and of the day after the last.
///
/// Identity: `id` is the `UID` for a one-off event. Each occurrence of a recurring event is its
/// own event with `recurrence_id` set to its original start and `id` = `UID#` + that start in
/// UTC (`20250301T120000Z`, or `20250301` for all-day), so an occurrence can be liked, joined
/// or cancelled on its own, and re-importing the series finds the same ids.
///
/// JSON: snake_case keys, instants as ISO 8601 UTC strings with whole seconds.
public struct Event: Codable, Equatable, Sendable, Identifiable {
    /// Stable id (see the type's documentation).
    public var id: String
    /// The iCalendar `UID` (shared by all occurrences of a series).
    public var uid: String
    /// The original start of this occurrence of a recurring event; nil for a one-off event.
    public var recurrenceID: Date?
    /// The iCalendar `SEQUENCE`: a higher one replaces the stored event on import.
    public var sequence: Int
    /// `SUMMARY`.
    public var title: String
    /// `DESCRIPTION`.
    public var description: String?
    /// Lowercased slugs of all `CATEGORIES` (see ``CategorySlug``).
    public var categories: [String]
    /// The first instant of the event.
    public var startsAt: Date
    /// The instant the event is over (exclusive).
    public var endsAt: Date
    /// Whether the event takes whole days (`VALUE=DATE`).
    public var allDay: Bool
    /// The IANA zone of a timed event; nil for UTC and for all-day events.
    public var timeZone: String?
    /// `LOCATION` and `GEO`.
    public var location: EventLocation?
    /// `URL`.
    public var url: String?
    /// See ``EventStatus`` for the iCalendar mapping.
    public var status: EventStatus
    /// How many people may go (`X-SWIFTBUS-CAPACITY`); nil for no limit.
    public var capacity: Int?
    /// Likes, owned by the service (never imported or exported).
    public var likeCount: Int
    /// People going, owned by the service.
    public var goingCount: Int
    /// People waiting for a place, owned by the service.
    public var waitlistCount: Int

    /// Creates an event; the counts start at zero.
    public init(
        id: String, uid: String, recurrenceID: Date? = nil, sequence: Int = 0, title: String, description: String? = nil,
        categories: [String] = [], startsAt: Date, endsAt: Date, allDay: Bool = false, timeZone: String? = nil,
        location: EventLocation? = nil, url: String? = nil, status: EventStatus = .scheduled, capacity: Int? = nil,
        likeCount: Int = 0, goingCount: Int = 0, waitlistCount: Int = 0
    ) {
        self.id = id
        self.uid = uid
        self.recurrenceID = recurrenceID
        self.sequence = sequence
        self.title = title
        self.description = description
        self.categories = categories
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.allDay = allDay
        self.timeZone = timeZone
        self.location = location
        self.url = url
        self.status = status
        self.capacity = capacity
        self.likeCount = likeCount
        self.goingCount = goingCount
        self.waitlistCount = waitlistCount
    }

    /// The id of an event: the UID, or for an occurrence the UID and its original start.
    /// - Parameters:
    ///   - uid: the iCalendar `UID`.
    ///   - recurrenceID: the original start of the occurrence, nil for a one-off event.
    ///   - allDay: whether the occurrence is a date (its id then ends in `yyyyMMdd`).
    public static func makeID(uid: String, recurrenceID: Date?, allDay: Bool) -> String {
        guard let recurrenceID else { return uid }
        let civil = CivilDateTime(utc: recurrenceID)
        return uid + "#" + (allDay ? civil.date.basicFormat : civil.basicFormat + "Z")
    }

    /// Whether the event overlaps `[from, to)`; an event without duration counts when it starts
    /// inside the range.
    public func overlaps(from: Date, to: Date) -> Bool {
        guard startsAt < to else { return false }
        return endsAt > from || (endsAt == startsAt && startsAt >= from)
    }
}
