extension WeatherFeature {
    /// One caller's search, as the TCA seed's `SearchState`.
    public struct SearchState: Codable, Equatable, Sendable {
        /// The query as typed (trimmed).
        public var searchQuery: String
        /// The upstream call the search waits on or was answered by.
        public var key: SearchKey
        /// The cities found.
        public var list: [City] = []
        public var status: SearchStatus = .loading
        /// Where ``list`` came from, once answered.
        public var source: CitySource?

        public init(searchQuery: String, key: SearchKey, list: [City] = [], status: SearchStatus = .loading, source: CitySource? = nil) {
            self.searchQuery = searchQuery
            self.key = key
            self.list = list
            self.status = status
            self.source = source
        }
    }
}
