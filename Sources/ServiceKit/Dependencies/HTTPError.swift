import Foundation

/// Why an HTTP call to an upstream did not give the value asked for, with what a caller needs
/// to act on it: the status, the headers (`retry-after`, rate-limit budgets) and the start of
/// the body (the seed's `NetworkError`, with its context kept).
public enum HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No HTTP answer: refused, reset, unknown host, or timed out.
    case transport(HTTPTransportError)
    /// An answer with a status outside 200...299.
    case status(Int, headers: [String: String], excerpt: String)
    /// A 2xx answer whose body is not the JSON expected.
    case invalidBody(status: Int, reason: String, excerpt: String)

    /// The status, when there was an answer.
    public var status: Int? {
        switch self {
        case .transport: return nil
        case .status(let status, _, _), .invalidBody(let status, _, _): return status
        }
    }

    /// Whether the request ran out of time.
    public var timedOut: Bool {
        if case .transport(let error) = self { return error.timedOut }
        return false
    }

    /// The seconds `Retry-After` asks to wait (delta-seconds form), when it is present.
    public var retryAfter: Int? {
        guard case .status(_, let headers, _) = self else { return nil }
        return HTTPError.retryAfter(headers)
    }

    public var description: String {
        switch self {
        case .transport(let error): return error.description
        case .status(let status, _, let excerpt): return "HTTP \(status)" + (excerpt.isEmpty ? "" : ": \(excerpt)")
        case .invalidBody(let status, let reason, let excerpt):
            return "HTTP \(status) with an invalid body (\(reason))" + (excerpt.isEmpty ? "" : ": \(excerpt)")
        }
    }

    /// `Retry-After` in seconds (the delta-seconds form; an HTTP date is read relative to `now`).
    public static func retryAfter(_ headers: [String: String], now: Date = Date()) -> Int? {
        guard let raw = headers["retry-after"]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
        if let seconds = Double(raw), seconds >= 0 { return Int(seconds.rounded(.up)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: raw) else { return nil }
        return max(0, Int(date.timeIntervalSince(now).rounded(.up)))
    }

    /// The first `limit` characters of a body, on one line, for an error message.
    public static func excerpt(_ body: Data, limit: Int = 200) -> String {
        let text = String(decoding: body.prefix(limit * 4), as: UTF8.self)
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count > limit ? String(line.prefix(limit)) + "..." : line
    }
}

extension HTTPClient {
    /// Sends `request` and decodes a 2xx JSON body as `T`.
    /// - Throws: ``HTTPError/transport(_:)``, ``HTTPError/status(_:headers:excerpt:)`` for any
    ///   other status, ``HTTPError/invalidBody(status:reason:excerpt:)`` when the JSON is not a `T`.
    public func json<T: Decodable>(
        _ request: HTTPRequest, as type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()
    )
        async throws(HTTPError) -> T
    {
        let response = try await data(request)
        do {
            return try decoder.decode(T.self, from: response.body)
        } catch {
            throw .invalidBody(status: response.status, reason: "not a \(T.self): \(error)", excerpt: HTTPError.excerpt(response.body))
        }
    }

    /// Sends `request` and returns a 2xx response.
    /// - Throws: ``HTTPError/transport(_:)``, ``HTTPError/status(_:headers:excerpt:)``.
    public func data(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await send(request)
        } catch {
            throw .transport(error)
        }
        guard (200...299).contains(response.status) else {
            throw .status(response.status, headers: response.headers, excerpt: HTTPError.excerpt(response.body))
        }
        return response
    }
}
