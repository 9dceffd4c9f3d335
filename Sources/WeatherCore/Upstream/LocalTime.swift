import Foundation

/// Formats instants as the ISO 8601 strings the models carry, in a zone or at a fixed offset.
struct LocalTime: Sendable {
    private let calendar: Calendar
    /// Set when the zone is a fixed offset: faster than asking the time zone each time.
    private let fixedOffset: Int?

    /// - Parameter timeZone: The zone times are shown in.
    init(timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
        self.fixedOffset = nil
    }

    /// - Parameter offsetSeconds: A fixed offset from UTC.
    init(offsetSeconds: Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        self.calendar = calendar
        self.fixedOffset = offsetSeconds
    }

    static let utc = LocalTime(offsetSeconds: 0)

    /// The UTC offsets a provider's answer may state: ISO 8601's ±18 h (zones in use lie
    /// within -12 h...+14 h). Decoders refuse others, which no zone has and which would
    /// overflow the offset arithmetic here.
    static let offsetRange = -18 * 3600...18 * 3600

    private func offset(at date: Date) -> Int {
        fixedOffset ?? calendar.timeZone.secondsFromGMT(for: date)
    }

    private func fields(_ date: Date) -> (DateComponents, Int) {
        let offset = offset(at: date)
        let shifted = fixedOffset == nil ? date : date.addingTimeInterval(TimeInterval(offset))
        let components = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: shifted)
        return (components, offset)
    }

    /// `2025-01-01T12:00:00+08:00`; UTC as `Z`.
    func timestamp(_ date: Date) -> String {
        let (c, offset) = fields(date)
        let base =
            Self.pad(c.year ?? 0, 4) + "-" + Self.pad(c.month ?? 0) + "-" + Self.pad(c.day ?? 0) + "T" + Self.pad(c.hour ?? 0) + ":"
            + Self.pad(c.minute ?? 0) + ":" + Self.pad(c.second ?? 0)
        if offset == 0 && fixedOffset == 0 { return base + "Z" }
        let sign = offset < 0 ? "-" : "+"
        let magnitude = abs(offset)
        return base + sign + Self.pad(magnitude / 3600) + ":" + Self.pad(magnitude % 3600 / 60)
    }

    /// The local calendar date, `2025-01-01`.
    func date(_ date: Date) -> String {
        let (c, _) = fields(date)
        return Self.pad(c.year ?? 0, 4) + "-" + Self.pad(c.month ?? 0) + "-" + Self.pad(c.day ?? 0)
    }

    /// The local hour of the day, 0...23.
    func hour(_ date: Date) -> Int {
        fields(date).0.hour ?? 0
    }

    /// The instant of a local wall-clock time `yyyy-MM-dd'T'HH:mm[:ss]` or a date `yyyy-MM-dd`
    /// (its midnight); nil when the text is neither.
    func instant(ofLocal text: String) -> Date? {
        let parts = text.split(separator: "T", maxSplits: 1)
        guard let datePart = parts.first else { return nil }
        let day = datePart.split(separator: "-")
        guard day.count == 3, let year = Int(day[0]), let month = Int(day[1]), let dayOfMonth = Int(day[2]) else { return nil }
        var components = DateComponents(year: year, month: month, day: dayOfMonth, hour: 0, minute: 0, second: 0)
        if parts.count == 2 {
            let clock = parts[1].split(separator: ":")
            guard clock.count == 2 || clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]) else { return nil }
            components.hour = hour
            components.minute = minute
            if clock.count == 3 {
                guard let second = Int(clock[2]) else { return nil }
                components.second = second
            }
        }
        guard let date = calendar.date(from: components) else { return nil }
        return fixedOffset.map { date.addingTimeInterval(-TimeInterval($0)) } ?? date
    }

    private static func pad(_ value: Int, _ width: Int = 2) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
