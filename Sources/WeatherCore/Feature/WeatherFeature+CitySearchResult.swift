extension WeatherFeature {
    /// Cities a search found and where they came from.
    public struct CitySearchResult: Sendable, Equatable {
        /// The cities, in the source's order.
        public var cities: [City]
        /// The upstream that answered, or the embedded table.
        public var source: CitySource
        /// The upstream failure the embedded table answered for, when it did.
        public var fallback: WeatherUpstreamError?

        public init(cities: [City], source: CitySource, fallback: WeatherUpstreamError? = nil) {
            self.cities = cities
            self.source = source
            self.fallback = fallback
        }
    }
}
