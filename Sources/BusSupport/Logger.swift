import Foundation

/// A small logger in the shape of swift-log (which cannot be fetched here): a label, levels,
/// autoclosure messages and dotted metadata keys. Lines go to standard error as
/// `time level label: message key=value ...`. Never log payloads or tokens: log type and size.
public struct Logger: Sendable {
    public enum Level: Int, Comparable, Sendable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public var name: String { String(describing: self) }
    }

    public typealias Metadata = [String: String]

    public let label: String
    public var logLevel: Level

    /// The level new loggers start at: `BUS_LOG_LEVEL` (trace...critical), default `info`.
    public static let defaultLevel: Level = {
        let name = ProcessInfo.processInfo.environment["BUS_LOG_LEVEL"]?.lowercased() ?? "info"
        return Level.allCases.first { $0.name == name } ?? .info
    }()

    public init(label: String, level: Level = Logger.defaultLevel) {
        self.label = label
        self.logLevel = level
    }

    public func log(_ level: Level, _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        guard level >= logLevel else { return }
        var line = "\(Self.timestamp()) \(level.name) \(label): \(message())"
        for (key, value) in metadata().sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(value.contains(" ") ? "\"\(value)\"" : value)"
        }
        line += "\n"
        Self.output.withLock { count in
            count &+= 1
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    public func trace(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.trace, m(), metadata: metadata()) }
    public func debug(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.debug, m(), metadata: metadata()) }
    public func info(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.info, m(), metadata: metadata()) }
    public func notice(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.notice, m(), metadata: metadata()) }
    public func warning(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.warning, m(), metadata: metadata()) }
    public func error(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.error, m(), metadata: metadata()) }
    public func critical(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.critical, m(), metadata: metadata()) }

    // Counts lines written; the lock keeps concurrent lines whole.
    private static let output = Locked<Int>(0)

    private static func timestamp() -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        var tm = tm()
        var seconds = tv.tv_sec
        gmtime_r(&seconds, &tm)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
            tm.tm_hour, tm.tm_min, tm.tm_sec, Int(tv.tv_usec / 1000))
    }
}

/// Logs one line per key at most once per `interval`, counting what it suppressed: for
/// per-peer warnings that a misbehaving peer could otherwise turn into a log flood.
package struct RateLimitedLog {
    private var last: [String: (MonotonicTime, Int)] = [:]
    let interval: Duration

    package init(interval: Duration = .seconds(10)) { self.interval = interval }

    /// Returns the number of suppressed repeats to mention if the line should be logged now,
    /// or nil if it should be suppressed.
    package mutating func shouldLog(_ key: String, now: MonotonicTime) -> Int? {
        if let (time, suppressed) = last[key], now - time < interval {
            last[key] = (time, suppressed + 1)
            return nil
        }
        let suppressed = last[key]?.1 ?? 0
        last[key] = (now, 0)
        if last.count > 10_000 { last.removeAll() }
        return suppressed
    }
}
