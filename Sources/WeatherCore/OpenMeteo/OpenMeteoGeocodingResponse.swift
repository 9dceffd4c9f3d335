/// Open-Meteo's `/v1/search` answer. Its encoder omits empty fields, so no match has no
/// `results` key at all.
struct OpenMeteoGeocodingResponse: Decodable {
    struct Result: Decodable {
        var id: Int
        var name: String
        var latitude: Double
        var longitude: Double
        var countryCode: String?
        var admin1: String?
        var timezone: String?
        var population: Int?

        enum CodingKeys: String, CodingKey {
            case id, name, latitude, longitude
            case countryCode = "country_code"
            case admin1, timezone, population
        }
    }

    var results: [Result]?
}
