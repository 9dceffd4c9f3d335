import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP request to an upstream (an OAuth provider, Open-Meteo, Reddit).
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }
}

/// The request never got an HTTP answer (refused, reset, timed out, bad URL).
public struct HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The request ran out of time (rather than being refused or reset).
    public var timedOut: Bool
    public init(_ message: String, timedOut: Bool = false) {
        self.message = message
        self.timedOut = timedOut
    }
    public var description: String { message }
}

/// Sends HTTP requests, as a dependency: URLSession, or a closure in tests (tests of the
/// clients point the live one at a local server that speaks the upstream's real JSON).
public struct HTTPClient: Sendable {
    public var send: @Sendable (HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse

    public init(send: @escaping @Sendable (HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse) {
        self.send = send
    }

    /// Foundation's URLSession (libcurl on Linux, on its own threads): no cookies, no cache,
    /// each request bounded by `timeout`; `userAgent` is sent unless the request sets its own.
    ///
    /// A redirect is not followed unless `followRedirects` is true: the 3xx comes back as the
    /// answer (status, `location` header). An upstream API's redirect means something the client
    /// must read (Reddit's 302 for an unknown subreddit), and following it would send the
    /// request's headers, `Authorization` included, to wherever the `location` points. Only a
    /// client playing a browser follows them.
    public static func live(timeout: Duration = .seconds(10), userAgent: String? = nil, followRedirects: Bool = false) -> HTTPClient {
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = SessionBox(
            URLSession(configuration: configuration, delegate: followRedirects ? nil : RedirectRefusal(), delegateQueue: nil))
        return HTTPClient { (request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse in
            var urlRequest = URLRequest(url: request.url, timeoutInterval: seconds)
            urlRequest.httpMethod = request.method
            if let userAgent { urlRequest.setValue(userAgent, forHTTPHeaderField: "User-Agent") }
            for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
            urlRequest.httpBody = request.body
            do {
                let (data, response) = try await session.session.data(for: urlRequest)
                guard let http = response as? HTTPURLResponse else { throw HTTPTransportError("not an HTTP response") }
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields {
                    if let key = key as? String, let value = value as? String { headers[key] = value }
                }
                return HTTPResponse(status: http.statusCode, headers: headers, body: data)
            } catch let error as HTTPTransportError {
                throw error
            } catch let error as URLError {
                throw HTTPTransportError(
                    "\(request.method) \(Self.endpoint(request.url)): \(Self.describe(error))", timedOut: error.code == .timedOut)
            } catch {
                throw HTTPTransportError("\(request.method) \(Self.endpoint(request.url)): \(error.localizedDescription)")
            }
        }
    }

    /// Scheme, host, port and path: never the query (which may carry a code, a state or a key).
    public static func endpoint(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.fragment = nil
        components?.user = nil
        components?.password = nil
        return components?.string ?? "the provider"
    }

    static func describe(_ error: URLError) -> String {
        switch error.code {
        case .timedOut: return "timed out"
        case .cannotConnectToHost: return "connection refused"
        case .cannotFindHost, .dnsLookupFailed: return "unknown host"
        case .networkConnectionLost: return "connection lost"
        case .notConnectedToInternet: return "no network"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate: return "TLS failed"
        default: return "network error \(error.code.rawValue)"
        }
    }
}

/// Completes every redirect with nil, which makes URLSession hand back the 3xx response itself.
/// It is the session's delegate: FoundationNetworking consults the session delegate for
/// redirects of the async `data(for:)` tasks.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// URLSession is documented as safe to use from any thread; the box only tells the compiler.
private final class SessionBox: @unchecked Sendable {
    let session: URLSession
    init(_ session: URLSession) { self.session = session }
}
