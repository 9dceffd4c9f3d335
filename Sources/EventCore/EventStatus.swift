/// Whether an event takes place as announced.
///
/// iCalendar mapping (import): `STATUS:CANCELLED` is `cancelled`; `X-SWIFTBUS-STATUS:POSTPONED`
/// is `postponed` whatever `STATUS` says; `CONFIRMED`, `TENTATIVE` or no `STATUS` is `scheduled`
/// (a tentative event is still on the calendar). Export: `scheduled` is `STATUS:CONFIRMED`,
/// `cancelled` is `STATUS:CANCELLED`, `postponed` is `STATUS:TENTATIVE` plus
/// `X-SWIFTBUS-STATUS:POSTPONED`, because RFC 5545 has no postponed status and a consumer that
/// ignores the X- property should still see the event as not confirmed.
public enum EventStatus: String, Codable, Equatable, Sendable, CaseIterable {
    case scheduled
    case cancelled
    case postponed
}
