import Foundation

/// Builds OpenWeatherMap requests under a configurable base URL. Every URL carries the API key
/// as `appid`; print requests through ``UpstreamRequest/description``, which redacts it.
public struct OpenWeatherMapEndpoints: Sendable, Equatable {
    /// `https://api.openweathermap.org` by default.
    public var baseURL: URL
    public var apiKey: OpenWeatherMapAPIKey

    public static let defaultBaseURL = URL(string: "https://api.openweathermap.org")!
    /// The most results the geocoder returns.
    public static let maxSearchLimit = 5

    public init(baseURL: URL = Self.defaultBaseURL, apiKey: OpenWeatherMapAPIKey) {
        self.baseURL = baseURL
        self.apiKey = apiKey
    }

    /// `geo/1.0/direct?q=..&limit=..&appid=K`: the geocoder that replaced the deprecated
    /// built-in one. `q` may be `name`, `name,country` or `name,state,country`.
    ///
    /// - Parameters:
    ///   - query: The place to look up.
    ///   - limit: How many results, clamped to 1...5.
    public func search(query: String, limit: Int) -> UpstreamRequest {
        let limit = min(max(limit, 1), Self.maxSearchLimit)
        return request("/geo/1.0/direct", [("q", query), ("limit", String(limit)), ("appid", apiKey.value)])
    }

    /// `data/2.5/weather?lat&lon&units=metric&appid=K`: the current conditions.
    public func currentWeather(latitude: Double, longitude: Double) -> UpstreamRequest {
        request("/data/2.5/weather", coordinates(latitude, longitude))
    }

    /// `data/2.5/forecast?lat&lon&units=metric&appid=K`: the 5 day forecast in 3-hour steps.
    public func forecast(latitude: Double, longitude: Double) -> UpstreamRequest {
        request("/data/2.5/forecast", coordinates(latitude, longitude))
    }

    private func coordinates(_ latitude: Double, _ longitude: Double) -> [(String, String)] {
        [
            ("lat", QueryEncoding.coordinate(latitude)), ("lon", QueryEncoding.coordinate(longitude)), ("units", "metric"),
            ("appid", apiKey.value),
        ]
    }

    private func request(_ path: String, _ query: [(String, String)]) -> UpstreamRequest {
        UpstreamRequest(provider: .openWeatherMap, url: QueryEncoding.url(base: baseURL, path: path, query: query))
    }
}
