/// The part of an RRULE (RFC 5545 §3.3.10) that the importer expands: FREQ DAILY, WEEKLY or
/// MONTHLY with INTERVAL, COUNT, UNTIL, BYDAY, BYMONTHDAY and WKST.
struct RecurrenceRule: Hashable, Sendable {
    enum Frequency: String, Sendable {
        case daily = "DAILY"
        case weekly = "WEEKLY"
        case monthly = "MONTHLY"
    }

    /// A BYDAY entry: a weekday (0 = Monday) with an optional ordinal (`-1FR` is the last Friday).
    struct WeekdayRule: Hashable, Sendable {
        var weekday: Int
        var ordinal: Int?
    }

    var frequency: Frequency
    var interval = 1
    /// The largest INTERVAL read (yearly: every 10,000 years): larger ones are refused, so the
    /// expander's period arithmetic stays within `Int`.
    static let maxInterval = 10_000
    var count: Int?
    var until: ICalendarTime?
    var byDay: [WeekdayRule] = []
    var byMonthDay: [Int] = []
    var weekStart = 0

    /// What parsing a rule gave: a rule to expand, or why the event cannot be expanded.
    enum Parsed: Hashable, Sendable {
        case supported(RecurrenceRule)
        case unsupported(reason: String)
    }

    static let weekdayCodes = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

    /// Parses an RRULE value. Malformed text is an error; a well-formed rule this importer does
    /// not expand is `.unsupported` so the event is skipped, never expanded by a guess.
    static func parse(_ property: ContentLine) throws(ICalendarError) -> Parsed {
        func fail(_ message: String) -> ICalendarError {
            ICalendarError(line: property.line, message: "RRULE \(message)")
        }
        var parts: [(key: String, value: String)] = []
        for part in property.value.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, !pair[0].isEmpty, !pair[1].isEmpty else { throw fail("part '\(part)' is not NAME=value") }
            parts.append((pair[0].uppercased(), String(pair[1])))
        }
        let keys = parts.map(\.key)
        if let repeated = keys.first(where: { key in keys.filter { $0 == key }.count > 1 }) {
            throw fail("part \(repeated) appears more than once")
        }
        guard let frequencyText = parts.first(where: { $0.key == "FREQ" })?.value.uppercased() else {
            throw fail("has no FREQ")
        }
        let knownFrequencies = ["SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"]
        guard knownFrequencies.contains(frequencyText) else { throw fail("FREQ '\(frequencyText)' is not a frequency") }
        var rule = RecurrenceRule(frequency: .daily)
        var unsupported: String?
        for (key, value) in parts {
            switch key {
            case "FREQ":
                continue
            case "INTERVAL":
                guard let interval = Int(value), (1...Self.maxInterval).contains(interval) else {
                    throw fail("INTERVAL '\(value)' is not an integer from 1 to \(Self.maxInterval)")
                }
                rule.interval = interval
            case "COUNT":
                guard let count = Int(value), count > 0 else { throw fail("COUNT '\(value)' is not a positive integer") }
                rule.count = count
            case "UNTIL":
                guard let date = ICalendarTime.parseDate(value) else {
                    guard let (time, isUTC) = ICalendarTime.parseDateTime(value) else {
                        throw fail("UNTIL '\(value)' is not a date or date-time")
                    }
                    rule.until = isUTC ? .utc(time) : .floating(time)
                    continue
                }
                rule.until = .date(date)
            case "BYDAY":
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let entry = parseWeekdayRule(item) else { throw fail("BYDAY '\(item)' is not a weekday like MO or -1FR") }
                    rule.byDay.append(entry)
                }
            case "BYMONTHDAY":
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let day = Int(item), day != 0, (-31...31).contains(day) else {
                        throw fail("BYMONTHDAY '\(item)' is not a day of the month (1...31 or -31...-1)")
                    }
                    rule.byMonthDay.append(day)
                }
            case "WKST":
                guard let weekday = weekdayCodes.firstIndex(of: value.uppercased()) else {
                    throw fail("WKST '\(value)' is not a weekday")
                }
                rule.weekStart = weekday
            case "BYSECOND", "BYMINUTE", "BYHOUR", "BYYEARDAY", "BYWEEKNO", "BYMONTH", "BYSETPOS":
                unsupported = unsupported ?? "unsupported RRULE part \(key)"
            default:
                guard key.hasPrefix("X-") else { throw fail("part \(key) is not an RRULE part") }
                unsupported = unsupported ?? "unsupported RRULE part \(key)"
            }
        }
        if rule.count != nil && rule.until != nil { throw fail("has both COUNT and UNTIL") }
        guard let frequency = Frequency(rawValue: frequencyText) else {
            return .unsupported(reason: "unsupported RRULE FREQ=\(frequencyText)")
        }
        rule.frequency = frequency
        if let unsupported { return .unsupported(reason: unsupported) }
        if frequency != .monthly, let ordinal = rule.byDay.first(where: { $0.ordinal != nil }) {
            let code = "\(ordinal.ordinal ?? 0)\(weekdayCodes[ordinal.weekday])"
            return .unsupported(reason: "unsupported RRULE BYDAY \(code) with FREQ=\(frequencyText) (ordinals need FREQ=MONTHLY)")
        }
        if frequency == .weekly && !rule.byMonthDay.isEmpty {
            return .unsupported(reason: "unsupported RRULE BYMONTHDAY with FREQ=WEEKLY")
        }
        return .supported(rule)
    }

    private static func parseWeekdayRule(_ text: Substring) -> WeekdayRule? {
        guard text.count >= 2, let weekday = weekdayCodes.firstIndex(of: text.suffix(2).uppercased()) else { return nil }
        let prefix = text.dropLast(2)
        guard !prefix.isEmpty else { return WeekdayRule(weekday: weekday, ordinal: nil) }
        guard let ordinal = Int(prefix), ordinal != 0, (-53...53).contains(ordinal) else { return nil }
        return WeekdayRule(weekday: weekday, ordinal: ordinal)
    }
}
