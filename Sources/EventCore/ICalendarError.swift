/// Why an iCalendar document could not be imported at all.
///
/// The import is all or nothing: the first malformed line stops it, and this error names that
/// line so a person can open the file and fix it.
public struct ICalendarError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The 1-based number of the physical line where the offending content line starts.
    public var line: Int
    /// What is wrong, e.g. "DTSTART value '20251301' is not a date".
    public var message: String

    /// Creates an error for a line.
    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    /// "line 12: END:VEVENT without BEGIN:VEVENT".
    public var description: String { "line \(line): \(message)" }
}
