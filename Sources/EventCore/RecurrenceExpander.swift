import Foundation

/// Expands a ``RecurrenceRule`` into occurrence starts inside an import range.
///
/// It walks the rule's periods (days, weeks from WKST, or months) from DTSTART on the wall
/// clock of the event's zone, so a weekly 19:00 stays 19:00 across a DST change. DTSTART is
/// always the first occurrence (RFC 5545 §3.8.5.3). COUNT counts occurrences before EXDATE
/// removes any, as the RFC's recurrence set does.
struct RecurrenceExpander: Sendable {
    /// The last occurrence the rule allows.
    enum Until: Hashable, Sendable {
        case instant(Date)
        case day(CivilDate)
    }

    /// The result: occurrence starts, or why the rule could not be walked to the range.
    enum Expansion: Equatable, Sendable {
        case occurrences([Date])
        case tooLong(reason: String)
    }

    /// A bound on the periods walked, so a rule that starts centuries before the range cannot
    /// keep the importer busy.
    static let maxPeriods = 100_000

    var rule: RecurrenceRule
    /// DTSTART on the wall clock of `zone` (midnight for an all-day event).
    var start: CivilDateTime
    /// The event's zone; UTC for UTC and all-day events.
    var zone: TimeZone
    var until: Until?
    var excludedInstants: Set<Date> = []
    var excludedDays: Set<CivilDate> = []

    /// Occurrence starts that overlap `range`, given how an occurrence's end follows its start.
    func expand(overlapping range: Range<Date>, end: (Date) -> Date) -> Expansion {
        var starts: [Date] = []
        var count = 0
        func consider(_ day: CivilDate) -> Bool {
            var wall = start
            wall.date = day
            let instant = wall.instant(in: zone)
            switch until {
            case .instant(let last)? where instant > last: return false
            case .day(let last)? where day > last: return false
            default: break
            }
            count += 1
            if let limit = rule.count, count > limit { return false }
            guard instant < range.upperBound else { return false }
            if !excludedInstants.contains(instant) && !excludedDays.contains(day) {
                let finish = end(instant)
                if finish > range.lowerBound || (finish == instant && instant >= range.lowerBound) { starts.append(instant) }
            }
            return true
        }
        guard consider(start.date) else { return .occurrences(starts) }
        let rangeEnd = range.upperBound.addingTimeInterval(2 * 86_400)
        for period in 0..<Self.maxPeriods {
            let (periodStart, days) = candidates(period: period)
            if CivilDateTime(date: periodStart, hour: 0, minute: 0, second: 0).utcInstant > rangeEnd {
                return .occurrences(starts)
            }
            for day in days where day > start.date {
                guard consider(day) else { return .occurrences(starts) }
            }
        }
        return .tooLong(reason: "RRULE needs more than \(Self.maxPeriods) periods to reach the import range")
    }

    /// The first day of a period and the days the rule picks in it, ascending.
    func candidates(period: Int) -> (CivilDate, [CivilDate]) {
        let first = start.date
        switch rule.frequency {
        case .daily:
            let day = first.adding(days: period * rule.interval)
            let keep =
                (rule.byDay.isEmpty || rule.byDay.contains { $0.weekday == day.weekday })
                && (rule.byMonthDay.isEmpty || matchesMonthDay(day))
            return (day, keep ? [day] : [])
        case .weekly:
            let weekStart = first.adding(days: -((first.weekday - rule.weekStart + 7) % 7) + 7 * period * rule.interval)
            let weekdays = rule.byDay.isEmpty ? [first.weekday] : rule.byDay.map(\.weekday)
            let days = Set(weekdays.map { weekStart.adding(days: ($0 - rule.weekStart + 7) % 7) })
            return (weekStart, days.sorted())
        case .monthly:
            let monthIndex = first.year * 12 + (first.month - 1) + period * rule.interval
            let year = monthIndex / 12
            let month = monthIndex % 12 + 1
            return (CivilDate(year: year, month: month, day: 1), monthDays(year: year, month: month))
        }
    }

    private func matchesMonthDay(_ day: CivilDate) -> Bool {
        let length = CivilDate.daysIn(year: day.year, month: day.month)
        return rule.byMonthDay.contains { $0 > 0 ? $0 == day.day : length + 1 + $0 == day.day }
    }

    private func monthDays(year: Int, month: Int) -> [CivilDate] {
        let length = CivilDate.daysIn(year: year, month: month)
        var byMonthDay: Set<Int>?
        if !rule.byMonthDay.isEmpty {
            byMonthDay = Set(rule.byMonthDay.map { $0 > 0 ? $0 : length + 1 + $0 }.filter { (1...length).contains($0) })
        }
        var byDay: Set<Int>?
        if !rule.byDay.isEmpty {
            let firstWeekday = CivilDate(year: year, month: month, day: 1).weekday
            var days = Set<Int>()
            for entry in rule.byDay {
                let firstMatch = 1 + (entry.weekday - firstWeekday + 7) % 7
                let matches = Array(stride(from: firstMatch, through: length, by: 7))
                switch entry.ordinal {
                case nil: days.formUnion(matches)
                case let ordinal? where ordinal > 0 && ordinal <= matches.count: days.insert(matches[ordinal - 1])
                case let ordinal? where ordinal < 0 && -ordinal <= matches.count: days.insert(matches[matches.count + ordinal])
                default: break
                }
            }
            byDay = days
        }
        let chosen: Set<Int>
        switch (byMonthDay, byDay) {
        case let (monthDays?, weekDays?): chosen = monthDays.intersection(weekDays)
        case let (monthDays?, nil): chosen = monthDays
        case let (nil, weekDays?): chosen = weekDays
        case (nil, nil): chosen = start.date.day <= length ? [start.date.day] : []
        }
        return chosen.sorted().map { CivilDate(year: year, month: month, day: $0) }
    }
}
