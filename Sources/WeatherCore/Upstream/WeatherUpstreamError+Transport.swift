import Foundation

extension WeatherUpstreamError {
    /// A failure to get any HTTP answer for `request`, described without its API key.
    ///
    /// - Parameters:
    ///   - request: The request that failed.
    ///   - reason: What went wrong (`connection refused`, `unknown host`).
    /// - Returns: ``unreachable(_:detail:)`` naming the redacted URL and the reason.
    public static func unreachable(_ request: UpstreamRequest, reason: String) -> WeatherUpstreamError {
        .unreachable(request.provider, detail: "\(Redaction.redact(request.url)): \(Redaction.redact(reason))")
    }
}
