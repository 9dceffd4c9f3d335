extension WeatherFeature {
    /// Everything the service knows. Only ``followed``, ``units`` and the followed cities'
    /// ``forecasts`` are state topics (saved and restored); the rest is about work in flight.
    public struct State: Codable, Equatable, Sendable {
        /// The followed cities, in the order they were followed.
        public var followed: [City] = []
        /// The units every forecast is in: both providers are asked for metric values.
        public var units = "metric"
        /// The last forecast of each followed city, keyed by city id.
        public var forecasts: [Int: Forecast] = [:]
        /// Cities seen in search results, so a caller can follow or forecast them by id.
        public var knownCities: [Int: City] = [:]
        /// ``knownCities``' ids, oldest first, to forget the oldest beyond the limit.
        public var knownOrder: [Int] = []
        /// Each caller's last search (the TCA seed's `SearchState`), keyed by request caller.
        public var searches: [String: SearchState] = [:]
        /// ``searches``' callers, least recently searching first.
        public var searchOrder: [String] = []
        /// Upstream searches in flight and the requests (ids) waiting for each.
        public var searchesInFlight: [SearchKey: [Int]] = [:]
        /// Forecast fetches in flight and the `forecast` requests (ids) waiting for each.
        public var forecastsInFlight: [Int: [Int]] = [:]
        /// `refresh` requests (by id) waiting for their cities' fetches.
        public var refreshes: [Int: RefreshProgress] = [:]

        public init() {}
    }
}
