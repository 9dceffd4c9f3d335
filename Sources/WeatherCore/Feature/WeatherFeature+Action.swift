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
}
