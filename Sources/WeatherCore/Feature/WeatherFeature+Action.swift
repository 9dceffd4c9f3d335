import ServiceKit

extension WeatherFeature {
    /// What happens to the service, named for the event.
    public enum Action: Sendable, Equatable {
        /// `search {"query", "count"?}` from `caller` (the seed's `search(query:)`).
        case search(RequestID, query: String, count: Int?, caller: String)
        /// An upstream search (or the embedded table standing in for it) answered (the seed's
        /// `citiesResponse`).
        case citiesResponse(SearchKey, Result<CitySearchResult, WeatherUpstreamError>)
        /// `forecast {"id"}`.
        case forecastRequested(RequestID, id: Int)
        /// A forecast fetch ended.
        case forecastResponse(cityID: Int, Result<Forecast, WeatherUpstreamError>)
        /// `follow {"id"}`.
        case followRequested(RequestID, id: Int)
        /// `unfollow {"id"}`.
        case unfollowRequested(RequestID, id: Int)
        /// `following {}`.
        case followingRequested(RequestID)
        /// `refresh {}`.
        case refreshRequested(RequestID)
        /// The refresh timer fired.
        case refreshTimerFired
        /// The service started (after restore): the restored forecasts are fetched again.
        case started
    }

    /// Cities a search found and where they came from.
    public struct CitySearchResult: Sendable, Equatable {
        public var cities: [City]
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
