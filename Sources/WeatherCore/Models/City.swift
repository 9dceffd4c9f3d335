/// A place a forecast can be asked for, keyed by its GeoNames id.
///
/// Cities come from the embedded table (``CityTable``) or from Open-Meteo's geocoder; both
/// use GeoNames ids, so the same city has the same `id` whichever source found it.
public struct City: Codable, Equatable, Hashable, Sendable, Identifiable {
    /// The GeoNames id.
    public var id: Int
    public var name: String
    /// ISO 3166-1 alpha-2 country code (`CH`).
    public var country: String
    /// The first-level division's name (`Zurich`), when the source gives it: Open-Meteo does,
    /// the embedded table does not.
    public var admin1: String?
    /// The first-level division's GeoNames code (`ZH`), when the source gives it: the embedded
    /// table does, Open-Meteo does not.
    public var admin1Code: String?
    public var lat: Double
    public var lon: Double
    /// IANA time zone identifier (`Europe/Zurich`).
    public var timezone: String
    /// Absent when the source does not know it (Open-Meteo omits it for small places).
    public var population: Int?

    enum CodingKeys: String, CodingKey {
        case id, name, country, admin1
        case admin1Code = "admin1_code"
        case lat, lon, timezone, population
    }

    public init(
        id: Int, name: String, country: String, admin1: String? = nil, admin1Code: String? = nil, lat: Double, lon: Double,
        timezone: String, population: Int?
    ) {
        self.id = id
        self.name = name
        self.country = country
        self.admin1 = admin1
        self.admin1Code = admin1Code
        self.lat = lat
        self.lon = lon
        self.timezone = timezone
        self.population = population
    }
}
