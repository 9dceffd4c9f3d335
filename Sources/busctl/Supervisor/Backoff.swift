/// Exponential restart back-off: `initial`, doubling up to `maximum`; a process that stayed up
/// for `resetAfter` starts again from `initial`. A value type, tested without processes.
struct Backoff: Sendable, Equatable {
    var initial: Duration = .milliseconds(500)
    var maximum: Duration = .seconds(30)
    var resetAfter: Duration = .seconds(60)
    private(set) var next: Duration = .milliseconds(500)

    init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(30), resetAfter: Duration = .seconds(60)) {
        self.initial = initial
        self.maximum = maximum
        self.resetAfter = resetAfter
        self.next = initial
    }

    /// The wait before restarting a process that ran for `uptime`; advances the back-off.
    mutating func delay(afterUptime uptime: Duration) -> Duration {
        if uptime >= resetAfter { next = initial }
        let delay = next
        next = min(next * 2, maximum)
        return delay
    }

    /// Back to `initial` (after a replace or a manual restart).
    mutating func reset() { next = initial }
}
