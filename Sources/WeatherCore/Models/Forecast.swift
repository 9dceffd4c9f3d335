import Foundation

/// A forecast for one city, the same shape whichever provider made it.
///
/// Times are ISO 8601 strings in the city's local time with its UTC offset
/// (`2025-01-01T12:00:00+08:00`); dates are local calendar dates (`2025-01-01`). A field a
/// provider does not give is absent, never filled in.
public struct Forecast: Codable, Equatable, Sendable {
    /// The GeoNames id of the city.
    public var cityID: Int
    public var current: CurrentWeather
    /// The next 48 hours from the current hour: 48 hourly steps from Open-Meteo, 16 three-hourly
    /// steps from OpenWeatherMap (its free forecast is 3-hourly); see ``hourlyIntervalSeconds``.
    public var hourly: [HourlyForecast]
    /// The seconds between two ``hourly`` entries: 3600 (Open-Meteo) or 10800 (OpenWeatherMap).
    public var hourlyIntervalSeconds: Int
    /// Up to 7 local days from today. OpenWeatherMap's days are aggregated from its 3-hourly
    /// steps (5 days ahead), so it gives 5 or 6, and the first and last cover part of the day.
    public var daily: [DailyForecast]
    public var units: ForecastUnits
    /// When the service got the answer from the provider (UTC, ISO 8601).
    public var fetchedAt: String
    public var source: WeatherProvider
    /// True when the service serves a cached forecast because the provider failed.
    public var stale: Bool

    enum CodingKeys: String, CodingKey {
        case cityID = "city_id"
        case current, hourly
        case hourlyIntervalSeconds = "hourly_interval_seconds"
        case daily, units
        case fetchedAt = "fetched_at"
        case source, stale
    }

    public init(
        cityID: Int, current: CurrentWeather, hourly: [HourlyForecast], hourlyIntervalSeconds: Int, daily: [DailyForecast],
        units: ForecastUnits, fetchedAt: String, source: WeatherProvider, stale: Bool
    ) {
        self.cityID = cityID
        self.current = current
        self.hourly = hourly
        self.hourlyIntervalSeconds = hourlyIntervalSeconds
        self.daily = daily
        self.units = units
        self.fetchedAt = fetchedAt
        self.source = source
        self.stale = stale
    }
}
