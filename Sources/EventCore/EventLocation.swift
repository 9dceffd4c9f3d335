/// Where an event happens: the venue text of `LOCATION` and the coordinates of `GEO`.
public struct EventLocation: Codable, Equatable, Sendable {
    /// The venue as people read it; empty when the calendar gave only coordinates.
    public var name: String
    /// WGS84 latitude in degrees, from `GEO`.
    public var lat: Double?
    /// WGS84 longitude in degrees, from `GEO`.
    public var lon: Double?

    /// Creates a location.
    public init(name: String, lat: Double? = nil, lon: Double? = nil) {
        self.name = name
        self.lat = lat
        self.lon = lon
    }
}
