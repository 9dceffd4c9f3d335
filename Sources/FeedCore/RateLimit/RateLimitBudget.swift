import Foundation

/// Reddit's request budget, as a value: updated from each answer's `x-ratelimit-remaining`
/// (a float string), `x-ratelimit-used`, `x-ratelimit-reset` (seconds to the window's end) and
/// `retry-after`, and asked before each request. Time is passed in.
///
/// No request goes out past the budget: requests sent and not yet answered count against it,
/// and an answer without rate-limit headers counts as one request against a local window
/// (`requestsPerWindow` per `window`) until Reddit's headers say otherwise.
public struct RateLimitBudget: Sendable, Equatable {
    /// Requests left in the window, as of the last answer; nil before any request.
    public private(set) var remaining: Double?
    /// Requests used in the window, as Reddit reported (or as counted locally).
    public private(set) var used: Int
    /// When the window ends and the budget is full again.
    public private(set) var resetAt: Date?
    /// Until when Reddit asked (with a 429 or `retry-after`) for no requests at all.
    public private(set) var retryAt: Date?
    /// Requests sent and not yet answered.
    public private(set) var inFlight: Int = 0

    /// The budget of a window Reddit has not described: 100 for OAuth clients, 10 without.
    public let requestsPerWindow: Double
    /// The length of such a window.
    public let window: TimeInterval
    /// The longest wait answered with ``RateLimitDecision/wait(until:)``; longer is a refusal.
    public let maxWait: TimeInterval

    /// - Parameters:
    ///   - requestsPerWindow: The budget assumed until Reddit sends headers (100 OAuth, 10 public).
    ///   - window: The window it applies to, in seconds.
    ///   - maxWait: The longest a request may be held back before it is refused instead.
    public init(requestsPerWindow: Double = 100, window: TimeInterval = 60, maxWait: TimeInterval = 5) {
        self.requestsPerWindow = requestsPerWindow
        self.window = window
        self.maxWait = maxWait
        self.used = 0
    }

    /// Whether a request may go out at `now`, without reserving anything.
    public func canSend(now: Date) -> RateLimitDecision {
        if let retryAt, now < retryAt { return hold(until: retryAt, now: now) }
        guard let remaining, let resetAt, now < resetAt else { return .send }
        if remaining - Double(inFlight) >= 1 { return .send }
        return hold(until: resetAt, now: now)
    }

    /// Like ``canSend(now:)``, and on ``RateLimitDecision/send`` counts the request as in flight.
    /// Follow it with ``record(headers:status:now:)``, ``recordNoAnswer(now:)`` or ``release()``.
    public mutating func reserve(now: Date) -> RateLimitDecision {
        let decision = canSend(now: now)
        guard decision == .send else { return decision }
        startWindowIfNeeded(now: now)
        inFlight += 1
        return .send
    }

    /// Takes in an answer to a reserved request.
    /// - Parameters:
    ///   - headers: The answer's headers, names lowercased.
    ///   - status: The HTTP status; 429 stops all requests until `retry-after` (or the reset).
    ///   - now: When the answer arrived.
    public mutating func record(headers: [String: String], status: Int, now: Date) {
        inFlight = max(0, inFlight - 1)
        if let text = headers["x-ratelimit-remaining"], let value = Double(text.trimmingCharacters(in: .whitespaces)) {
            remaining = value
            if let usedText = headers["x-ratelimit-used"], let value = Double(usedText.trimmingCharacters(in: .whitespaces)) {
                used = Int(value)
            }
            if let resetText = headers["x-ratelimit-reset"], let seconds = Double(resetText.trimmingCharacters(in: .whitespaces)) {
                resetAt = now.addingTimeInterval(max(0, seconds))
            } else if resetAt.map({ now >= $0 }) ?? true {
                resetAt = now.addingTimeInterval(window)
            }
        } else {
            countOne(now: now)
        }
        let retryAfter = headers["retry-after"].flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        if let retryAfter, retryAfter > 0 {
            retryAt = now.addingTimeInterval(retryAfter)
        } else if status == 429 {
            retryAt = resetAt.flatMap { $0 > now ? $0 : nil } ?? now.addingTimeInterval(1)
        }
        if status == 429 { remaining = 0 }
    }

    /// A reserved request got no answer (timeout, connection lost): it may have reached Reddit,
    /// so it counts as one request.
    public mutating func recordNoAnswer(now: Date) {
        inFlight = max(0, inFlight - 1)
        countOne(now: now)
    }

    /// A reserved request was not sent after all.
    public mutating func release() {
        inFlight = max(0, inFlight - 1)
    }

    private mutating func countOne(now: Date) {
        startWindowIfNeeded(now: now)
        remaining = (remaining ?? requestsPerWindow) - 1
        used += 1
    }

    /// Opens a local window when none is known or the last one ended.
    private mutating func startWindowIfNeeded(now: Date) {
        guard remaining == nil || resetAt.map({ now >= $0 }) ?? true else { return }
        remaining = requestsPerWindow
        used = 0
        resetAt = now.addingTimeInterval(window)
    }

    private func hold(until date: Date, now: Date) -> RateLimitDecision {
        let delay = date.timeIntervalSince(now)
        return delay <= maxWait ? .wait(until: date) : .refuse(retryAfter: delay)
    }
}
