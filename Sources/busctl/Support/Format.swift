import Foundation

/// How busctl writes numbers, sizes, durations and times for people.
enum Format {
    /// `1.5` for 1.5 s, `0.25`, `2`.
    static func seconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return number(value)
    }

    /// A short number: at most three decimals, no trailing zeros.
    static func number(_ value: Double) -> String {
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// An age or uptime in milliseconds: `850ms`, `12.3s`, `4m12s`, `3h05m`, `2d04h`.
    static func age(ms: Int64) -> String {
        if ms < 0 { return "-" }
        if ms < 1000 { return "\(ms)ms" }
        let seconds = ms / 1000
        if seconds < 60 { return String(format: "%.1fs", Double(ms) / 1000) }
        if seconds < 3600 { return String(format: "%dm%02ds", seconds / 60, seconds % 60) }
        if seconds < 86400 { return String(format: "%dh%02dm", seconds / 3600, (seconds % 3600) / 60) }
        return String(format: "%dd%02dh", seconds / 86400, (seconds % 86400) / 3600)
    }

    /// A latency in microseconds: `850µs`, `1.2ms`, `1.25s`; `-` when unknown.
    static func latency(us: Int?) -> String {
        guard let us else { return "-" }
        if us < 1000 { return "\(us)µs" }
        if us < 1_000_000 { return String(format: "%.1fms", Double(us) / 1000) }
        return String(format: "%.2fs", Double(us) / 1_000_000)
    }

    /// A size: `512 B`, `1.2 kB`, `3.4 MB`.
    static func bytes(_ value: Double) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = value
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(Int(value.rounded())) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// A rate per second: one decimal below 100, whole numbers above.
    static func rate(_ value: Double) -> String {
        if value == 0 { return "0" }
        return value < 100 ? String(format: "%.1f", value) : String(format: "%.0f", value)
    }

    /// Local wall-clock time of a Unix timestamp in microseconds: `14:02:11.532`.
    static func clock(us: UInt64) -> String {
        var seconds = time_t(us / 1_000_000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return String(format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec, Int((us % 1_000_000) / 1000))
    }

    /// ISO 8601 UTC with microseconds: `2025-01-02T14:02:11.532114Z`.
    static func iso(us: UInt64) -> String {
        var seconds = time_t(us / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, Int(us % 1_000_000))
    }

    /// Microseconds since the Unix epoch, now.
    static func nowMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec / 1000)
    }

    /// A payload on one line for people: compact JSON, or quoted text, or `<N bytes TYPE>`;
    /// cut at `limit` characters with the full size named.
    static func payload(_ bytes: [UInt8], contentType: String = "application/json", limit: Int?) -> String {
        var text: String
        if bytes.isEmpty {
            return "(empty)"
        } else if let value = JSONInput.value(bytes) {
            text = Output.json(value)
        } else if let string = String(validating: bytes, as: UTF8.self),
            !string.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\t" })
        {
            text = Output.json(string)
        } else {
            return "<\(bytes.count) bytes \(contentType)>"
        }
        if let limit, text.count > limit {
            let suffix = "… (\(bytes.count) B)"
            text = String(text.prefix(max(8, limit - suffix.count))) + suffix
        }
        return text
    }
}
