import Bus
import ServiceKit

/// The `weather` service around ``WeatherFeature``: its methods, state topics and settings,
/// shared by the executable and the tests.
public enum WeatherServiceDefinition {
    /// `weather.state` (the followed cities in order, the units), then one
    /// `weather.forecast.<id>` per followed city; the index comes first so the family restores
    /// the keys it lists.
    public static let stateTopics: [StateTopic<WeatherFeature.State>] = [
        .value(
            "weather.state", { WeatherAPI.Settings(followed: $0.followed, units: $0.units) },
            restore: { state, saved in
                state.followed = saved.followed
                state.units = saved.units
            }),
        .family(
            "weather.forecast", keys: { $0.followed.map { String($0.id) } }, value: { state, key in Int(key).flatMap { state.forecasts[$0] } },
            restore: { state, key, forecast in
                if let id = Int(key) { state.forecasts[id] = forecast }
            }),
    ]

    /// The service definition: methods `search`, `forecast`, `follow`, `unfollow`, `following`,
    /// `refresh`, the state topics, and a start that refreshes the restored cities.
    ///
    /// - Parameters:
    ///   - feature: the feature with its dependencies.
    ///   - concurrency: requests handled at once (a slow upstream holds only the requests waiting on it).
    ///   - requestTimeout: how long a request may wait for its answer; above the upstream timeout.
    public static func make(
        feature: WeatherFeature, concurrency: Int = 8, requestTimeout: Duration = .seconds(30)
    )
        -> ServiceDefinition<WeatherFeature>
    {
        var service = ServiceDefinition(name: "weather", feature: feature, initialState: WeatherFeature.State())
        for topic in stateTopics { service.state(topic) }
        service.concurrency = concurrency
        service.requestTimeout = requestTimeout
        service.startAction = .started
        service.method(
            "search",
            withRequest: { (id, input: WeatherAPI.SearchInput, request) in
                .search(id, query: input.query, count: input.count, caller: request.meta.caller ?? "")
            })
        service.method("forecast") { (id, input: WeatherAPI.CityInput) in .forecastRequested(id, id: input.id) }
        service.method("follow") { (id, input: WeatherAPI.CityInput) in .followRequested(id, id: input.id) }
        service.method("unfollow") { (id, input: WeatherAPI.CityInput) in .unfollowRequested(id, id: input.id) }
        service.method("following") { (id, _: Empty) in .followingRequested(id) }
        service.method("refresh") { (id, _: Empty) in .refreshRequested(id) }
        return service
    }
}
