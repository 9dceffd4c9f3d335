/// A VEVENT the importer left out and why ("missing UID", "unsupported RRULE part BYSETPOS").
public struct ICalendarImportSkip: Equatable, Sendable, CustomStringConvertible {
    /// The line of its `BEGIN:VEVENT`.
    public var line: Int
    /// Its UID, when it has one.
    public var uid: String?
    /// Why it was left out.
    public var reason: String

    /// Creates a skip.
    public init(line: Int, uid: String?, reason: String) {
        self.line = line
        self.uid = uid
        self.reason = reason
    }

    /// "line 40: VEVENT 'x@y' skipped: missing DTSTART".
    public var description: String {
        "line \(line): VEVENT \(uid.map { "'\($0)' " } ?? "")skipped: \(reason)"
    }
}
