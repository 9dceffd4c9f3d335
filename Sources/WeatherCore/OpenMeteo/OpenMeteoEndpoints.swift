import Foundation

/// Builds Open-Meteo requests (no API key) under configurable base URLs.
public struct OpenMeteoEndpoints: Sendable, Equatable {
    /// The geocoding API, `https://geocoding-api.open-meteo.com` by default.
    public var geocodingBaseURL: URL
    /// The forecast API, `https://api.open-meteo.com` by default.
    public var forecastBaseURL: URL

    public static let defaultGeocodingBaseURL = URL(string: "https://geocoding-api.open-meteo.com")!
    public static let defaultForecastBaseURL = URL(string: "https://api.open-meteo.com")!

    /// The most results the geocoder returns; it answers 400 above this.
    public static let maxSearchCount = 100

    /// What the forecast request asks for; ``OpenMeteoDecoder`` reads exactly these.
    static let currentVariables = [
        "temperature_2m", "relative_humidity_2m", "apparent_temperature", "weather_code", "cloud_cover", "pressure_msl",
        "wind_speed_10m", "wind_direction_10m",
    ]
    static let hourlyVariables = ["temperature_2m", "precipitation_probability", "weather_code"]
    static let dailyVariables = ["weather_code", "temperature_2m_max", "temperature_2m_min"]

    public init(geocodingBaseURL: URL = Self.defaultGeocodingBaseURL, forecastBaseURL: URL = Self.defaultForecastBaseURL) {
        self.geocodingBaseURL = geocodingBaseURL
        self.forecastBaseURL = forecastBaseURL
    }

    /// `<geocoding>/v1/search?name=..&count=..&language=en`.
    ///
    /// - Parameters:
    ///   - name: The text to look up; the geocoder answers nothing under 2 characters, exact
    ///     matches for 2 and fuzzy ones from 3.
    ///   - count: How many results, clamped to 1...100.
    public func search(name: String, count: Int) -> UpstreamRequest {
        let count = min(max(count, 1), Self.maxSearchCount)
        let url = QueryEncoding.url(
            base: geocodingBaseURL, path: "/v1/search", query: [("name", name), ("count", String(count)), ("language", "en")])
        return UpstreamRequest(provider: .openMeteo, url: url)
    }

    /// `<forecast>/v1/forecast?latitude=..&longitude=..&current=..&hourly=..&daily=..&timezone=auto&forecast_days=7`,
    /// with wind speeds in m/s (as OpenWeatherMap's metric units).
    public func forecast(latitude: Double, longitude: Double) -> UpstreamRequest {
        let url = QueryEncoding.url(
            base: forecastBaseURL, path: "/v1/forecast",
            query: [
                ("latitude", QueryEncoding.coordinate(latitude)),
                ("longitude", QueryEncoding.coordinate(longitude)),
                ("current", Self.currentVariables.joined(separator: ",")),
                ("hourly", Self.hourlyVariables.joined(separator: ",")),
                ("daily", Self.dailyVariables.joined(separator: ",")),
                ("wind_speed_unit", "ms"),
                ("timezone", "auto"),
                ("forecast_days", "7"),
            ])
        return UpstreamRequest(provider: .openMeteo, url: url)
    }
}
