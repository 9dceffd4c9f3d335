import Foundation

/// Builds the HTTP request for an endpoint: host and path for the access mode, `raw_json=1`
/// (text without HTML entity escaping), pagination, User-Agent, bearer token and form body.
public struct RedditRequestBuilder: Sendable, Equatable {
    /// `https://oauth.reddit.com`: where token-bearing calls go.
    public static let defaultOAuthBaseURL = URL(string: "https://oauth.reddit.com")!
    /// `https://www.reddit.com`: where anonymous `.json` reads go.
    public static let defaultPublicBaseURL = URL(string: "https://www.reddit.com")!

    public var access: RedditAccess
    public var userAgent: RedditUserAgent
    /// The OAuth host; a path prefix is kept (`http://127.0.0.1:8080/reddit`).
    public var oauthBaseURL: URL
    /// The public host; a path prefix is kept.
    public var publicBaseURL: URL

    public init(
        access: RedditAccess, userAgent: RedditUserAgent = .default, oauthBaseURL: URL = Self.defaultOAuthBaseURL,
        publicBaseURL: URL = Self.defaultPublicBaseURL
    ) {
        self.access = access
        self.userAgent = userAgent
        self.oauthBaseURL = oauthBaseURL
        self.publicBaseURL = publicBaseURL
    }

    /// The request for `endpoint`.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)`` for bad input (a subreddit
    ///   name, an id, a limit, an empty token), ``RedditError/signInRequired`` for an endpoint
    ///   that needs a user when access is anonymous.
    public func request(for endpoint: RedditEndpoint) throws(RedditError) -> HTTPRequestSpec {
        let route = try endpoint.route()
        var headers = ["User-Agent": userAgent.description, "Accept": "application/json"]
        let base: URL
        let suffix: String
        switch access {
        case .oauth(let token):
            let valid = !token.isEmpty && token.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
            guard valid else { throw .invalidInput(field: "token", value: "(redacted)", rule: "a non-empty token of printable ASCII") }
            headers["Authorization"] = "bearer \(token)"
            base = oauthBaseURL
            suffix = ""
        case .anonymous:
            guard !endpoint.needsUser else { throw .signInRequired }
            base = publicBaseURL
            suffix = ".json"
        }
        var body: Data?
        if route.method == .post {
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = Data(PercentEncoding.form(route.form).utf8)
        }
        let prefix = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        let path = route.segments.map(PercentEncoding.pathSegment).joined(separator: "/")
        let query = PercentEncoding.query(route.query + [("raw_json", "1")])
        guard let url = URL(string: "\(prefix)/\(path)\(suffix)?\(query)") else {
            throw .invalidInput(field: "base_url", value: base.absoluteString, rule: "an http(s) URL without a query")
        }
        return HTTPRequestSpec(method: route.method.rawValue, url: url, headers: headers, body: body)
    }
}
