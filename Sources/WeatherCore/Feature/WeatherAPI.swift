import Bus

/// The payloads of the `weather` methods and events, as they are on the wire.
public enum WeatherAPI {
    /// `search {"query", "count"?}`.
    public struct SearchInput: Codable, Sendable {
        public var query: String
        public var count: Int?
        public init(query: String, count: Int? = nil) {
            self.query = query
            self.count = count
        }
    }

    /// `forecast`, `follow`, `unfollow`: `{"id": N}`, a GeoNames id.
    public struct CityInput: Codable, Sendable {
        public var id: Int
        public init(id: Int) { self.id = id }
    }

    /// The answer to `search`.
    public struct SearchReply: Codable, Sendable, Equatable {
        /// `normal`, `no_result` or `failed`.
        public var status: String
        public var cities: [City]
        /// `open-meteo`, `openweathermap` or `embedded`.
        public var source: CitySource
        /// Why the search failed (`status: failed`), or why the embedded table answered.
        public var error: String?
        /// The error's code (`upstream_auth`, `upstream_unreachable`), with ``error``.
        public var code: String?

        public init(status: String, cities: [City], source: CitySource, error: String? = nil, code: String? = nil) {
            self.status = status
            self.cities = cities
            self.source = source
            self.error = error
            self.code = code
        }
    }

    /// The value of `weather.city.followed` and `weather.city.unfollowed`.
    public struct CityEvent: Codable, Sendable, Equatable {
        public var city: City
        /// The followed cities' ids after the change, in order.
        public var following: [Int]
    }

    /// The value of `weather.forecast.updated`.
    public struct ForecastEvent: Codable, Sendable, Equatable {
        public var id: Int
        public var fetchedAt: String
        public var source: WeatherProvider
        public var stale: Bool

        enum CodingKeys: String, CodingKey {
            case id
            case fetchedAt = "fetched_at"
            case source, stale
        }
    }

    /// The value of `weather.state`: the followed cities in order and the units.
    public struct Settings: Codable, Sendable, Equatable {
        public var followed: [City]
        public var units: String
    }
}
