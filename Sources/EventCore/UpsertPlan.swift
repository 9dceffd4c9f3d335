/// What to do with imported events given the stored ones, decided by id and SEQUENCE
/// (RFC 5545 §3.8.7.4: a higher SEQUENCE is a newer revision of the same event).
public struct UpsertPlan: Equatable, Sendable {
    /// Events with an id not stored yet.
    public var new: [Event]
    /// Stored events replaced by a higher SEQUENCE; they keep the stored like, going and
    /// waitlist counts, which the service owns.
    public var updated: [Event]
    /// Imported events that are not newer than the stored ones.
    public var skipped: [UpsertSkip]

    /// Creates a plan.
    public init(new: [Event], updated: [Event], skipped: [UpsertSkip]) {
        self.new = new
        self.updated = updated
        self.skipped = skipped
    }

    /// Decides, for each imported event in order, whether it is new, an update or skipped. An
    /// id imported twice is decided against the first one, as if that had been stored.
    /// - Parameters:
    ///   - existing: the stored events.
    ///   - imported: the events of an import.
    /// - Returns: the plan.
    public static func decide(existing: [Event], imported: [Event]) -> UpsertPlan {
        var stored = Dictionary(existing.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var plan = UpsertPlan(new: [], updated: [], skipped: [])
        for event in imported {
            guard let current = stored[event.id] else {
                plan.new.append(event)
                stored[event.id] = event
                continue
            }
            guard event.sequence > current.sequence else {
                plan.skipped.append(
                    UpsertSkip(event: event, reason: "sequence \(event.sequence) is not newer than \(current.sequence)"))
                continue
            }
            var update = event
            update.likeCount = current.likeCount
            update.goingCount = current.goingCount
            update.waitlistCount = current.waitlistCount
            plan.updated.append(update)
            stored[event.id] = update
        }
        return plan
    }
}
