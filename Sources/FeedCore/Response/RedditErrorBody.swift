/// The JSON of a Reddit error answer: `{"message":"Forbidden","error":403,"reason":"private"}`.
/// Every field is optional and `error` may be a number or a string.
struct RedditErrorBody: Decodable {
    var message: String?
    var reason: String?

    private enum CodingKeys: String, CodingKey {
        case message, reason
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        message = try? container.decodeIfPresent(String.self, forKey: .message)
        reason = try? container.decodeIfPresent(String.self, forKey: .reason)
    }
}
