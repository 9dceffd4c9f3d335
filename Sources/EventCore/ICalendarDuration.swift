import Foundation

/// A DURATION value (RFC 5545 §3.3.6): weeks and days are nominal (wall-clock days, so a day
/// across a DST change is 23 or 25 hours), hours, minutes and seconds are exact.
struct ICalendarDuration: Hashable, Sendable {
    var isNegative = false
    var days = 0
    var seconds = 0

    /// The longest duration read, in nominal days and in exact seconds each (about 2,700
    /// years): no event lasts longer, and a bound keeps the date arithmetic within `Int`. A
    /// longer one is refused like a malformed one.
    static let maxDays = 1_000_000
    static let maxSeconds = maxDays * 86_400

    /// Parses `[+-]P[nW]` or `[+-]P[nD][T[nH][nM][nS]]`; nil when malformed or longer than
    /// ``maxDays`` days or ``maxSeconds`` seconds.
    static func parse(_ text: String) -> ICalendarDuration? {
        var scalars = Substring(text)
        var duration = ICalendarDuration()
        if let sign = scalars.first, sign == "+" || sign == "-" {
            duration.isNegative = sign == "-"
            scalars = scalars.dropFirst()
        }
        guard scalars.first == "P" else { return nil }
        scalars = scalars.dropFirst()
        var number = ""
        var inTime = false
        var sawField = false
        for character in scalars {
            if let digit = character.wholeNumberValue, character.isASCII {
                number.append(String(digit))
                continue
            }
            if character == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                continue
            }
            guard let value = Int(number), value <= maxSeconds else { return nil }
            number = ""
            sawField = true
            switch (character, inTime) {
            case ("W", false): duration.days += value * 7
            case ("D", false): duration.days += value
            case ("H", true): duration.seconds += value * 3600
            case ("M", true): duration.seconds += value * 60
            case ("S", true): duration.seconds += value
            default: return nil
            }
            guard duration.days <= maxDays, duration.seconds <= maxSeconds else { return nil }
        }
        guard number.isEmpty, sawField else { return nil }
        return duration
    }

    /// `start` moved by this duration, the days counted on the wall clock of `zone`.
    func added(to start: Date, in zone: TimeZone) -> Date {
        let sign = isNegative ? -1 : 1
        guard days != 0 else { return start.addingTimeInterval(TimeInterval(sign * seconds)) }
        var wall = CivilDateTime(instant: start, in: zone)
        wall.date = wall.date.adding(days: sign * days)
        return wall.instant(in: zone).addingTimeInterval(TimeInterval(sign * seconds))
    }
}
