/// One entry of `json.errors` in a 200 answer: `["USER_REQUIRED", "Please log in to do that.", null]`.
public struct RedditAPIError: Sendable, Equatable, Codable, CustomStringConvertible {
    /// Reddit's upper-case code (`USER_REQUIRED`, `RATELIMIT`, `SUBREDDIT_NOEXIST`, ...).
    public var code: String
    public var message: String
    /// The form field the error is about, when there is one.
    public var field: String?

    public init(code: String, message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        code = try container.decode(String.self)
        message = try container.isAtEnd ? "" : container.decodeNil() ? "" : container.decode(String.self)
        field = try container.isAtEnd ? nil : container.decodeIfPresent(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(code)
        try container.encode(message)
        try container.encode(field)
    }

    /// `USER_REQUIRED: Please log in to do that.`, with the field when there is one.
    public var description: String {
        "\(code): \(message)" + (field.map { " (field \($0))" } ?? "")
    }
}
