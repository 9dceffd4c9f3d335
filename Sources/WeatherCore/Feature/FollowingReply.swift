/// The answer to `follow`, `unfollow` and `following`.
public struct FollowingReply: Codable, Sendable, Equatable {
    /// The followed cities, in the order they were followed.
    public var cities: [City]
    /// `metric`.
    public var units: String

    public init(cities: [City], units: String) {
        self.cities = cities
        self.units = units
    }

    init(_ state: WeatherFeature.State) {
        self.init(cities: state.followed, units: state.units)
    }
}
