import Foundation

/// What the rate-limit budget says about sending a request now.
public enum RateLimitDecision: Sendable, Equatable {
    /// Send it.
    case send
    /// The budget is spent but frees up soon: send at `until`.
    case wait(until: Date)
    /// The budget is spent for longer than a caller should wait: answer rate-limited and let
    /// the caller retry after this many seconds.
    case refuse(retryAfter: TimeInterval)
}
