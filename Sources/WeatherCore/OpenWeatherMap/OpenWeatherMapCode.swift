/// OpenWeatherMap's `cod`, which it sends as a number (`401`, `200`) or a string (`"404"`,
/// `"200"`) depending on the endpoint.
struct OpenWeatherMapCode: Decodable, Equatable {
    /// The code as a number; nil when the string is not one.
    var value: Int?

    init(_ value: Int?) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            value = number
        } else {
            value = Int(try container.decode(String.self).trimmingCharacters(in: .whitespaces))
        }
    }
}
