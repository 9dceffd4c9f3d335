import Foundation

/// A DATE or DATE-TIME property value (RFC 5545 §3.3.4, §3.3.5) before it is placed in time.
enum ICalendarTime: Hashable, Sendable {
    /// `VALUE=DATE`: a whole day.
    case date(CivilDate)
    /// `...Z`: a UTC time.
    case utc(CivilDateTime)
    /// `TZID=zone:...`: a wall time in a named zone.
    case zoned(CivilDateTime, tzid: String)
    /// No `Z`, no `TZID`: the same wall time wherever the reader is.
    case floating(CivilDateTime)

    var isDate: Bool {
        if case .date = self { return true }
        return false
    }

    /// Parses the value of a date or date-time property such as DTSTART.
    static func parse(_ property: ContentLine) throws(ICalendarError) -> ICalendarTime {
        let values = try parseList(property)
        guard values.count == 1, let value = values.first else {
            throw ICalendarError(line: property.line, message: "\(property.name) has \(values.count) values, expected one")
        }
        return value
    }

    /// Parses a comma-separated list of dates or date-times (EXDATE), all of one kind.
    static func parseList(_ property: ContentLine) throws(ICalendarError) -> [ICalendarTime] {
        let valueType = property.parameterValue("VALUE")?.uppercased()
        let tzid = property.parameterValue("TZID")
        var result: [ICalendarTime] = []
        for text in property.value.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            if valueType == "DATE" || (valueType == nil && text.utf8.count == 8) {
                guard let date = parseDate(text) else {
                    throw ICalendarError(line: property.line, message: "\(property.name) value '\(text)' is not a date")
                }
                result.append(.date(date))
                continue
            }
            guard valueType == nil || valueType == "DATE-TIME" else {
                throw ICalendarError(
                    line: property.line, message: "\(property.name) has VALUE=\(valueType ?? ""), expected DATE or DATE-TIME")
            }
            guard let (time, isUTC) = parseDateTime(text) else {
                throw ICalendarError(line: property.line, message: "\(property.name) value '\(text)' is not a date-time")
            }
            if isUTC {
                result.append(.utc(time))
            } else if let tzid {
                result.append(.zoned(time, tzid: tzid))
            } else {
                result.append(.floating(time))
            }
        }
        return result
    }

    /// `yyyyMMdd`, a real calendar date.
    static func parseDate(_ text: String) -> CivilDate? {
        let bytes = Array(text.utf8)
        guard bytes.count == 8, bytes.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let digits = bytes.map { Int($0 - 48) }
        let date = CivilDate(
            year: digits[0] * 1000 + digits[1] * 100 + digits[2] * 10 + digits[3],
            month: digits[4] * 10 + digits[5], day: digits[6] * 10 + digits[7])
        return date.isValid ? date : nil
    }

    /// `yyyyMMddTHHmmss` with an optional `Z`. A leap second (60) reads as 59.
    static func parseDateTime(_ text: String) -> (CivilDateTime, isUTC: Bool)? {
        var body = Substring(text)
        let isUTC = body.hasSuffix("Z")
        if isUTC { body = body.dropLast() }
        let parts = body.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2, let date = parseDate(String(parts[0])) else { return nil }
        let time = Array(parts[1].utf8)
        guard time.count == 6, time.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let digits = time.map { Int($0 - 48) }
        let hour = digits[0] * 10 + digits[1]
        let minute = digits[2] * 10 + digits[3]
        let second = digits[4] * 10 + digits[5]
        guard hour < 24, minute < 60, second <= 60 else { return nil }
        return (CivilDateTime(date: date, hour: hour, minute: minute, second: min(second, 59)), isUTC)
    }
}
