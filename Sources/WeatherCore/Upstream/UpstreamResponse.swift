import Foundation

/// An HTTP answer from a weather provider, as the decoders take it.
public struct UpstreamResponse: Sendable, Equatable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: Data

    /// - Parameters:
    ///   - status: The HTTP status code.
    ///   - headers: Response headers; names are lowercased here.
    ///   - body: The raw body.
    public init(status: Int, headers: [String: String] = [:], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }

    /// `Retry-After` in seconds, when the header holds a delay in seconds (an HTTP-date is not
    /// used: the decoders have no clock).
    var retryAfterSeconds: Int? {
        guard let value = headers["retry-after"]?.trimmingCharacters(in: .whitespaces), let seconds = Int(value), seconds >= 0 else {
            return nil
        }
        return seconds
    }

    /// The start of the body as one line of text, with any API key redacted, for error messages.
    var excerpt: String { Redaction.excerpt(of: body) }
}
