import BusSupport
import BusWire

/// Request counters and a latency window for one service, kept by the broker.
struct ServiceStats {
    var requests = 0
    var errors = 0
    var failed = 0
    var lastActivity: MonotonicTime?
    private var latencies = [UInt32](repeating: 0, count: 1024)
    private var latencyCount = 0

    mutating func record(status: Int, latencyNanos: Int64?, now: MonotonicTime) {
        requests += 1
        if !Status.isSuccess(status) { errors += 1 }
        if status >= 500 { failed += 1 }
        lastActivity = now
        if let latencyNanos {
            let micros = latencyNanos / 1_000
            latencies[latencyCount % latencies.count] = UInt32(clamping: micros)
            latencyCount += 1
        }
    }

    /// Percentile (0...1) of the last 1024 latencies, in microseconds.
    func percentile(_ p: Double) -> Int? {
        let n = min(latencyCount, latencies.count)
        guard n > 0 else { return nil }
        let sorted = latencies[0..<n].sorted()
        let index = min(n - 1, Int((Double(n) * p).rounded(.up)) - 1)
        return Int(sorted[max(0, index)])
    }

    func isIdle(now: MonotonicTime) -> Bool {
        guard let lastActivity else { return true }
        return now.nanoseconds(since: lastActivity) > 300_000_000_000
    }
}
