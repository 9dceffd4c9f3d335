import Foundation

/// Wall-clock time, for timestamps a reader compares across processes (durations use
/// ``MonotonicTime``).
public enum WallClock {
    /// Microseconds since the Unix epoch.
    public static func microsNow() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec / 1000)
    }
}
