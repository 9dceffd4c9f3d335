import Foundation

/// A DURATION value (RFC 5545 §3.3.6): weeks and days are nominal (wall-clock days, so a day
/// across a DST change is 23 or 25 hours), hours, minutes and seconds are exact.
struct ICalendarDuration: Hashable, Sendable {
    var isNegative = false
    var days = 0
    var seconds = 0

    /// Parses `[+-]P[nW]` or `[+-]P[nD][T[nH][nM][nS]]`.
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
            guard let value = Int(number) else { return nil }
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
