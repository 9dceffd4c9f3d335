import Bus
import Foundation

/// Reads the calendar `EventService` imports at its first start.
public enum EventsStartup {
    /// The sample calendar shipped with the service (`Resources/sample-events.ics`, marked as
    /// sample data: weekly and monthly series, so it always has coming events).
    public static var sampleCalendarURL: URL? {
        Bundle.module.url(forResource: "sample-events", withExtension: "ics")
    }

    /// The text of `--import FILE`, else of the sample (`--import-sample`: `busctl up` passes
    /// it, and a `--import` given with --service-args wins), checked with the importer; nil when
    /// neither is given.
    /// - Throws: ``ConfigurationError`` when the file cannot be read or is malformed (with its
    ///   line).
    public static func initialCalendar(path: String?, sample: Bool, now: Date = Date()) throws -> String? {
        let url: URL
        if let path {
            url = URL(fileURLWithPath: path)
        } else if sample {
            guard let sample = sampleCalendarURL else { throw ConfigurationError("the sample calendar is not installed next to the service") }
            url = sample
        } else {
            return nil
        }
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw ConfigurationError("cannot read the calendar \(url.path): \(error.localizedDescription)")
        }
        do {
            try Events.checkCalendar(text, now: now)
        } catch {
            throw ConfigurationError("the calendar \(url.path) cannot be imported: \(error.description)")
        }
        return text
    }
}
