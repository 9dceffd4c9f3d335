/// One result of OpenWeatherMap's geocoder (`geo/1.0/direct`). It has no GeoNames id;
/// ``CityTable/match(_:)`` finds the embedded city it stands for.
public struct OpenWeatherMapPlace: Decodable, Equatable, Sendable {
    public var name: String
    /// The name in other languages, keyed by language code (`"de": "Zürich"`).
    public var localNames: [String: String]?
    public var lat: Double
    public var lon: Double
    /// ISO 3166-1 alpha-2 country code.
    public var country: String
    public var state: String?

    enum CodingKeys: String, CodingKey {
        case name
        case localNames = "local_names"
        case lat, lon, country, state
    }

    public init(name: String, localNames: [String: String]? = nil, lat: Double, lon: Double, country: String, state: String? = nil) {
        self.name = name
        self.localNames = localNames
        self.lat = lat
        self.lon = lon
        self.country = country
        self.state = state
    }
}
