import Foundation

/// An HTTP answer from Reddit as the decoders take it.
public struct RedditResponse: Sendable, Equatable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: Data

    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - headers: The headers; names are lowercased here whatever their case.
    ///   - body: The raw body.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// The start of the body as one line, for error messages: enough to tell an HTML error page
    /// or a truncated answer from JSON.
    public func excerpt(limit: Int = 120) -> String {
        let text = String(decoding: body.prefix(limit * 4), as: UTF8.self)
        let line = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if line.isEmpty { return "(empty body)" }
        return line.count > limit ? String(line.prefix(limit)) + "…" : line
    }

    /// `retry-after` in seconds, else the rate-limit window's `x-ratelimit-reset`.
    var retryAfter: Double? {
        if let value = headers["retry-after"].flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }), value >= 0 { return value }
        if let value = headers["x-ratelimit-reset"].flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }), value >= 0 { return value }
        return nil
    }

    /// A parameter of the `www-authenticate` challenge (`error`, `scope`), quoted or not.
    func authenticateParameter(_ name: String) -> String? {
        guard let header = headers["www-authenticate"] else { return nil }
        var rest = Substring(header)
        while let range = rest.range(of: name + "=") {
            let before = rest[..<range.lowerBound].last
            rest = rest[range.upperBound...]
            guard before == nil || before == " " || before == "," else { continue }
            if rest.first == "\"" {
                let value = rest.dropFirst().prefix { $0 != "\"" }
                return String(value)
            }
            return String(rest.prefix { $0 != "," && $0 != " " })
        }
        return nil
    }
}
