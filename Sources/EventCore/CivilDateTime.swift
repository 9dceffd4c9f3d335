import Foundation

/// A wall-clock date and time with no zone (whole seconds), and its conversions to instants.
struct CivilDateTime: Hashable, Sendable {
    var date: CivilDate
    var hour: Int
    var minute: Int
    var second: Int

    init(date: CivilDate, hour: Int, minute: Int, second: Int) {
        self.date = date
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The UTC wall time of an instant (fractions of a second are dropped).
    init(utc instant: Date) {
        self.init(secondsSince1970: Int(instant.timeIntervalSince1970.rounded(.down)))
    }

    /// The wall time of an instant in a zone.
    init(instant: Date, in zone: TimeZone) {
        let seconds = Int(instant.timeIntervalSince1970.rounded(.down))
        self.init(secondsSince1970: seconds + zone.secondsFromGMT(for: instant))
    }

    init(secondsSince1970 seconds: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        self.init(date: CivilDate(dayNumber: days), hour: rest / 3600, minute: rest % 3600 / 60, second: rest % 60)
    }

    /// Parses `yyyy-MM-ddTHH:mm:ssZ`, the JSON form of instants.
    init?(isoFormat text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == 45, bytes[7] == 45, bytes[10] == 84, bytes[13] == 58, bytes[16] == 58,
            bytes[19] == 90
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        let date = CivilDate(year: year, month: month, day: day)
        guard date.isValid, hour < 24, minute < 60, second < 60 else { return nil }
        self.init(date: date, hour: hour, minute: minute, second: second)
    }

    var secondsSince1970: Int { date.dayNumber * 86_400 + hour * 3600 + minute * 60 + second }

    /// This wall time read as UTC.
    var utcInstant: Date { Date(timeIntervalSince1970: TimeInterval(secondsSince1970)) }

    /// This wall time read in `zone`, as RFC 5545 §3.3.5 says: a time skipped by a DST jump
    /// takes the offset from before the jump (02:30 becomes 03:30), a time that happens twice
    /// is its first occurrence.
    func instant(in zone: TimeZone) -> Date {
        let local = secondsSince1970
        func offset(at seconds: Int) -> Int {
            zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds)))
        }
        let before = offset(at: local - 86_400)
        let after = offset(at: local + 86_400)
        let valid = Set([before, after]).map { local - $0 }.filter { offset(at: $0) == local - $0 }
        let seconds = valid.min() ?? local - before
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `yyyyMMddTHHmmss`.
    var basicFormat: String { date.basicFormat + "T" + pad(hour, 2) + pad(minute, 2) + pad(second, 2) }

    /// `yyyy-MM-ddTHH:mm:ss`.
    var isoFormat: String {
        pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2) + "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":"
            + pad(second, 2)
    }
}
