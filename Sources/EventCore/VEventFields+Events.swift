import Foundation

extension VEventFields {
    /// Why a well-formed VEVENT gives no event.
    struct SkipReason: Error, Equatable, Sendable {
        var message: String
    }

    /// A resolved DTSTART: the instant, the zone its wall clock runs in, and the zone to store.
    private struct Placed {
        var instant: Date
        var wall: CivilDateTime
        var zone: TimeZone
        var storedZone: String?
    }

    /// The events of this VEVENT: one, or one per occurrence of its RRULE in the range.
    func events(options: ICalendarImportOptions) throws(SkipReason) -> [Event] {
        guard let uid else { throw SkipReason(message: "missing UID") }
        guard let start else { throw SkipReason(message: "missing DTSTART") }
        if end != nil && duration != nil { throw SkipReason(message: "has both DTEND and DURATION") }
        if hasRDate { throw SkipReason(message: "unsupported property RDATE") }
        if rules.count > 1 { throw SkipReason(message: "more than one RRULE") }
        if recurrenceID != nil && !rules.isEmpty { throw SkipReason(message: "unsupported RRULE on an occurrence (RECURRENCE-ID)") }
        if let range = recurrenceRange { throw SkipReason(message: "unsupported RECURRENCE-ID;RANGE=\(range)") }
        let allDay = start.isDate
        if let end, end.isDate != allDay {
            throw SkipReason(message: allDay ? "DTEND is a date-time but DTSTART is a date" : "DTEND is a date but DTSTART is a date-time")
        }
        if let duration {
            if duration.isNegative { throw SkipReason(message: "DURATION is negative") }
            if allDay && duration.seconds != 0 { throw SkipReason(message: "DURATION of an all-day event is not whole days") }
        }
        let placed = try place(start, options: options)
        let endOf: (Date) -> Date
        if let end {
            let length = try place(end, options: options).instant.timeIntervalSince(placed.instant)
            if length < 0 { throw SkipReason(message: "DTEND is before DTSTART") }
            endOf = { $0.addingTimeInterval(length) }
        } else if let duration {
            let zone = placed.zone
            endOf = { duration.added(to: $0, in: zone) }
        } else {
            endOf = { $0.addingTimeInterval(allDay ? 86_400 : 0) }
        }
        var recurrenceInstant: Date?
        if let recurrenceID {
            if recurrenceID.isDate != allDay { throw SkipReason(message: "RECURRENCE-ID and DTSTART are not both dates or both date-times") }
            recurrenceInstant = try place(recurrenceID, options: options).instant
        }
        let base = Event(
            id: Event.makeID(uid: uid, recurrenceID: recurrenceInstant, allDay: allDay), uid: uid, recurrenceID: recurrenceInstant,
            sequence: sequence, title: summary ?? "", description: description, categories: CategorySlug.make(categories),
            startsAt: placed.instant, endsAt: endOf(placed.instant), allDay: allDay, timeZone: placed.storedZone,
            location: eventLocation, url: url, status: status, capacity: capacity)
        let rule: RecurrenceRule
        switch rules.first {
        case nil: return [base]
        case .unsupported(let reason)?: throw SkipReason(message: reason)
        case .supported(let supported)?: rule = supported
        }
        var expander = RecurrenceExpander(rule: rule, start: placed.wall, zone: placed.zone)
        switch rule.until {
        case .date(let day)?: expander.until = .day(day)
        case .utc(let time)?: expander.until = .instant(time.utcInstant)
        case .floating(let time)?, .zoned(let time, _)?: expander.until = .instant(time.instant(in: placed.zone))
        case nil: break
        }
        for exception in exceptions {
            if case .date(let day) = exception {
                expander.excludedDays.insert(day)
            } else {
                expander.excludedInstants.insert(try place(exception, options: options).instant)
            }
        }
        switch expander.expand(overlapping: options.expansionRange, end: endOf) {
        case .tooLong(let reason):
            throw SkipReason(message: reason)
        case .occurrences(let starts):
            return starts.map { occurrenceStart in
                var occurrence = base
                occurrence.recurrenceID = occurrenceStart
                occurrence.id = Event.makeID(uid: uid, recurrenceID: occurrenceStart, allDay: allDay)
                occurrence.startsAt = occurrenceStart
                occurrence.endsAt = endOf(occurrenceStart)
                return occurrence
            }
        }
    }

    private var eventLocation: EventLocation? {
        guard location != nil || geo != nil else { return nil }
        return EventLocation(name: location ?? "", lat: geo?.lat, lon: geo?.lon)
    }

    private func place(_ time: ICalendarTime, options: ICalendarImportOptions) throws(SkipReason) -> Placed {
        let utc = TimeZone(identifier: "UTC")!
        switch time {
        case .date(let day):
            let wall = CivilDateTime(date: day, hour: 0, minute: 0, second: 0)
            return Placed(instant: wall.utcInstant, wall: wall, zone: utc, storedZone: nil)
        case .utc(let wall):
            return Placed(instant: wall.utcInstant, wall: wall, zone: utc, storedZone: nil)
        case .zoned(let wall, let tzid):
            guard let zone = ICalendarZones.zone(named: tzid) else {
                throw SkipReason(message: "TZID '\(tzid)' is not a known IANA time zone")
            }
            return Placed(instant: wall.instant(in: zone), wall: wall, zone: zone, storedZone: ICalendarZones.storedName(of: zone))
        case .floating(let wall):
            let zone = options.floatingTimeZone
            return Placed(instant: wall.instant(in: zone), wall: wall, zone: zone, storedZone: ICalendarZones.storedName(of: zone))
        }
    }
}
