import Bus
import Foundation
import ServiceKit

/// The weather service's logic (the TCA WeatherApp's search reducer, its `WeatherClient`, city
/// forecasts and followed cities) as a kit feature: a pure reducer over ``State``, with the
/// upstream calls as effects that run off the store.
///
/// - A search asks the upstream once per distinct `(query, count)` in flight: identical
///   searches share the call, and a newer search never waits behind an older one. When the
///   upstream is unreachable (or fails in a way that may pass), the embedded ``CityTable``
///   answers instead, marked `source: "embedded"`.
/// - A forecast is fetched from the upstream; when that fails transiently, the forecast stored
///   for a followed city is served marked `stale`, and nothing is ever made up.
/// - Followed cities (in order) and their forecasts are the state topics `weather.state` and
///   `weather.forecast.<id>`; their forecasts refresh on a timer and at once on follow.
public struct WeatherFeature: Feature {
    /// The upstream; nil runs on the embedded city table alone (`--provider embedded`), with
    /// no forecasts but the stored ones.
    public var client: WeatherClient?
    /// The embedded GeoNames table: the search fallback and the city lookup by id.
    public var table: CityTable
    /// How often followed cities' forecasts are fetched again.
    public var refreshInterval: Duration

    /// The search `count` when the request gives none.
    public static let defaultSearchCount = 10
    /// The largest search `count` (Open-Meteo's geocoder answers 400 above it).
    public static let maxSearchCount = OpenMeteoEndpoints.maxSearchCount
    /// The longest query accepted, in characters.
    public static let maxQueryLength = 100
    /// The most cities followed at once: each is one retained topic and one upstream call per
    /// refresh.
    public static let maxFollowed = 100
    /// The most cities remembered from search results, so their ids can be followed and
    /// forecast without another search.
    public static let maxKnownCities = 1000
    /// The most callers whose last search is kept.
    public static let maxSearchers = 256
    /// The default refresh interval of followed cities' forecasts.
    public static let defaultRefreshInterval: Duration = .seconds(30 * 60)

    public init(client: WeatherClient?, table: CityTable, refreshInterval: Duration = Self.defaultRefreshInterval) {
        self.client = client
        self.table = table
        self.refreshInterval = refreshInterval
    }

    /// Where answers come from: the upstream's name, or `embedded`.
    var source: CitySource {
        client.map { CitySource($0.provider) } ?? .embedded
    }

    public func reduce(into state: inout State, _ action: Action) -> Effect<Action> {
        switch action {
        case .search(let id, let query, let count, let caller):
            return search(into: &state, id, query: query, count: count, caller: caller)
        case .citiesResponse(let key, let result):
            return citiesLoaded(into: &state, key, result)
        case .forecastRequested(let id, let cityID):
            return forecastRequested(into: &state, id, cityID: cityID)
        case .forecastResponse(let cityID, let result):
            return forecastLoaded(into: &state, cityID: cityID, result)
        case .followRequested(let id, let cityID):
            return follow(into: &state, id, cityID: cityID)
        case .unfollowRequested(let id, let cityID):
            return unfollow(into: &state, id, cityID: cityID)
        case .followingRequested(let id):
            return .reply(id, FollowingReply(state))
        case .refreshRequested(let id):
            return refresh(into: &state, waiter: id)
        case .refreshTimerFired, .started:
            return refresh(into: &state, waiter: nil)
        }
    }

    public func timers(for state: State) -> [FeatureTimer<Action>] {
        state.followed.isEmpty || client == nil ? [] : [FeatureTimer("refresh", every: refreshInterval, send: .refreshTimerFired)]
    }

    /// The city with this id: followed, seen in a search, or in the embedded table.
    func city(_ id: Int, in state: State) -> City? {
        state.followed.first { $0.id == id } ?? state.knownCities[id] ?? table.city(id: id)
    }
}
