import Foundation

/// An HTTP request as data: what the feed service hands to its HTTP client.
public struct HTTPRequestSpec: Sendable, Equatable, CustomStringConvertible {
    /// `GET` or `POST`.
    public var method: String
    /// The full URL, query included.
    public var url: URL
    /// Header names as Reddit documents them (`User-Agent`, `Authorization`, ...).
    public var headers: [String: String]
    /// A form-encoded body for `POST`, nil for `GET`.
    public var body: Data?

    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// Method and path only: the query may hold a search the user typed, and headers hold the
    /// token, so neither belongs in a log line.
    public var description: String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.user = nil
        components?.password = nil
        return "\(method) \(components?.string ?? "<url>")"
    }
}
