import Foundation

/// A reading of the monotonic clock (`CLOCK_MONOTONIC`) as whole nanoseconds: the time type of
/// the bus's loops (kernel, client I/O threads, broker, handlers).
///
/// `ContinuousClock.Instant` and `Duration` are types of the standard library, which is built
/// for library evolution: outside it their layout is known only at run time, so every store,
/// copy and comparison of one goes through value witnesses, and `Duration` arithmetic is 128-bit.
/// Profiles of the request path show that per request and per loop turn (docs/PERFORMANCE.md).
/// This is one `Int64`: the arithmetic is plain integer arithmetic.
///
/// `Duration` stays the type of every public setting (timeouts, heartbeats); hot paths convert
/// it once with ``Swift/Duration/nanosecondsClamped`` and then add integers.
public struct MonotonicTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since an unspecified start (the machine's boot); only differences mean anything.
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static var now: MonotonicTime {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return MonotonicTime(nanoseconds: Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec))
    }

    /// This time plus `nanoseconds` (saturating: a huge timeout is "never", not a wrap-around).
    @inline(__always)
    public func advanced(by nanoseconds: Int64) -> MonotonicTime {
        let (sum, overflow) = self.nanoseconds.addingReportingOverflow(nanoseconds)
        return MonotonicTime(nanoseconds: overflow ? (nanoseconds > 0 ? .max : .min) : sum)
    }

    /// Nanoseconds from `earlier` to this time (negative if `earlier` is later).
    @inline(__always)
    public func nanoseconds(since earlier: MonotonicTime) -> Int64 {
        nanoseconds &- earlier.nanoseconds
    }

    /// Whole milliseconds from `earlier` to this time, rounded toward zero.
    @inline(__always)
    public func milliseconds(since earlier: MonotonicTime) -> Int64 {
        nanoseconds(since: earlier) / 1_000_000
    }

    /// Whole microseconds from `earlier` to this time, rounded toward zero.
    @inline(__always)
    public func microseconds(since earlier: MonotonicTime) -> Int64 {
        nanoseconds(since: earlier) / 1_000
    }

    /// Converts `duration` (outside hot paths; they keep it as nanoseconds).
    public static func + (lhs: MonotonicTime, rhs: Duration) -> MonotonicTime {
        lhs.advanced(by: rhs.nanosecondsClamped)
    }

    public static func - (lhs: MonotonicTime, rhs: Duration) -> MonotonicTime {
        lhs.advanced(by: -rhs.nanosecondsClamped)
    }

    /// The interval as a `Duration` (for display and public API; hot paths use ``nanoseconds(since:)``).
    public static func - (lhs: MonotonicTime, rhs: MonotonicTime) -> Duration {
        .nanoseconds(lhs.nanoseconds(since: rhs))
    }

    public static func < (lhs: MonotonicTime, rhs: MonotonicTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public var description: String { "MonotonicTime(\(nanoseconds) ns)" }
}

extension Duration {
    /// Whole nanoseconds, clamped to `Int64` (about ±292 years): converted once, outside the
    /// loops that add it to a ``MonotonicTime``.
    public var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? (seconds < 0 ? .min : .max) : sum
    }

    /// `self * max(1, factor)` in whole nanoseconds, clamped like ``nanosecondsClamped`` (a
    /// heartbeat interval times its liveness).
    package func nanosecondsClamped(times factor: Int) -> Int64 {
        let (product, overflow) = nanosecondsClamped.multipliedReportingOverflow(by: Int64(max(1, factor)))
        return overflow ? (self < .zero ? .min : .max) : product
    }

    /// Whole milliseconds, rounded toward zero, clamped like ``nanosecondsClamped``.
    package var wholeMilliseconds: Int64 { nanosecondsClamped / 1_000_000 }
}
