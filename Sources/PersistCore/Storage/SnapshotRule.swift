import Bus

/// The sequence number and flags of a topic's latest snapshot: all the snapshot rule needs.
public struct SnapshotHead: Equatable, Sendable {
    public var seq: UInt64
    public var flags: EventMeta.Flags

    public init(seq: UInt64, flags: EventMeta.Flags) {
        self.seq = seq
        self.flags = flags
    }
}

/// When a stored event becomes its topic's latest snapshot.
///
/// The snapshot only moves forward, with the kernel's rule: a higher sequence number replaces
/// it, a lower or equal one never does, unless the event carries the `reset` flag. On top of
/// that, an event flagged `provisional` (published by a service that could not restore its
/// state) never replaces a snapshot that is not provisional, reset or not: this is what keeps
/// a service that started empty from overwriting the saved state (docs/PERSISTENCE.md).
public enum SnapshotRule {
    /// Whether an event with `candidate`'s seq and flags replaces `current` (nil: no snapshot).
    public static func replaces(_ current: SnapshotHead?, with candidate: SnapshotHead) -> Bool {
        guard let current else { return true }
        if candidate.flags.contains(.provisional) && !current.flags.contains(.provisional) { return false }
        if candidate.flags.contains(.reset) { return true }
        return candidate.seq > current.seq
    }
}
