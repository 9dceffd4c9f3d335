import Bus

/// Drops the kernel's re-sent current values a subscriber already has: a subscription that
/// arrives later (anyone's, with an overlapping prefix) makes the kernel send the snapshots to
/// every matching subscriber again.
struct SnapshotFilter {
    private var last: [String: UInt64] = [:]
    /// When true, every snapshot is dropped (only events published from now on pass).
    let liveOnly: Bool

    init(liveOnly: Bool) { self.liveOnly = liveOnly }

    mutating func admit(_ event: BusEvent) -> Bool {
        let key = event.topic + "\u{0}" + event.meta.instance
        let previous = last[key]
        if previous == nil || event.meta.seq > previous! { last[key] = event.meta.seq }
        guard event.isSnapshot else { return true }
        if liveOnly { return false }
        return previous == nil || event.meta.seq > previous!
    }
}
