import Foundation

/// A GET request to a weather provider. Its `description` redacts the API key, so a request
/// can be logged as it is.
public struct UpstreamRequest: Sendable, Equatable, CustomStringConvertible {
    public var provider: WeatherProvider
    /// The full URL, API key included: send it, never print it.
    public var url: URL

    public init(provider: WeatherProvider, url: URL) {
        self.provider = provider
        self.url = url
    }

    /// `GET` and the URL with `appid` redacted.
    public var description: String { "GET \(Redaction.redact(url))" }
}
