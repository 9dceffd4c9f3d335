import Foundation
import ServiceKit

extension WeatherClient {
    /// Open-Meteo (no API key): its geocoder for the search, its forecast API for forecasts.
    ///
    /// - Parameters:
    ///   - endpoints: the base URLs (`--geocoding-url`, `--open-meteo-url`).
    ///   - http: the HTTP client; its timeout bounds each call.
    ///   - now: when an answer arrived (a forecast's `fetched_at`).
    public static func openMeteo(_ endpoints: OpenMeteoEndpoints, http: HTTPClient, now: @escaping @Sendable () -> Date) -> WeatherClient {
        WeatherClient(
            provider: .openMeteo,
            searchCities: { (query, count) throws(WeatherUpstreamError) -> [City] in
                let response = try await fetch(endpoints.search(name: query, count: count), with: http)
                return Array(try OpenMeteoDecoder.cities(from: response).prefix(count))
            },
            forecast: { (city) throws(WeatherUpstreamError) -> Forecast in
                let response = try await fetch(endpoints.forecast(latitude: city.lat, longitude: city.lon), with: http)
                return try OpenMeteoDecoder.forecast(from: response, cityID: city.id, fetchedAt: now())
            })
    }
}
