/// A 400 answer's body: `{"fields":["display_name"],"explanation":"...","message":"Bad Request","reason":"TOO_LONG"}`.
public struct RedditValidationFailure: Sendable, Equatable, Codable, CustomStringConvertible {
    public var fields: [String]
    public var explanation: String?
    public var message: String?
    public var reason: String?

    public init(fields: [String] = [], explanation: String? = nil, message: String? = nil, reason: String? = nil) {
        self.fields = fields
        self.explanation = explanation
        self.message = message
        self.reason = reason
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fields = try container.decodeIfPresent([String].self, forKey: .fields) ?? []
        explanation = try container.decodeIfPresent(String.self, forKey: .explanation)
        message = try container.decodeIfPresent(String.self, forKey: .message)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
    }

    /// `TOO_LONG on display_name: this is too long`, from whatever parts Reddit sent.
    public var description: String {
        var text = reason ?? message ?? "Bad Request"
        if !fields.isEmpty { text += " on \(fields.joined(separator: ", "))" }
        if let explanation, !explanation.isEmpty { text += ": \(explanation)" }
        return text
    }
}
