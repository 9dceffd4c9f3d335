/// OpenWeatherMap geocoder results mapped to GeoNames cities of the embedded table.
public struct OpenWeatherMapMatch: Equatable, Sendable {
    /// A place with no city in the table, and why.
    public struct Unmatched: Equatable, Sendable {
        public var place: OpenWeatherMapPlace
        public var reason: String
    }

    /// The matched cities in the geocoder's order, each once.
    public var cities: [City]
    /// The places left out: the service may log them (they carry no key), never invents an id.
    public var unmatched: [Unmatched]
}
