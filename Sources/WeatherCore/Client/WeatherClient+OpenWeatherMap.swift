import Foundation
import ServiceKit

extension WeatherClient {
    /// OpenWeatherMap with an API key: its geocoder, whose places are given GeoNames ids by
    /// matching them in the embedded table (a place the table lacks is left out, never given a
    /// made-up id), and its current weather and 5-day forecast, normalised to ``Forecast``.
    ///
    /// - Parameters:
    ///   - endpoints: the base URL (`--openweathermap-url`) and the key.
    ///   - table: the embedded city table the places are matched in.
    ///   - http: the HTTP client; its timeout bounds each call.
    ///   - now: when an answer arrived.
    public static func openWeatherMap(
        _ endpoints: OpenWeatherMapEndpoints, table: CityTable, http: HTTPClient, now: @escaping @Sendable () -> Date
    ) -> WeatherClient {
        WeatherClient(
            provider: .openWeatherMap,
            searchCities: { (query, count) throws(WeatherUpstreamError) -> [City] in
                let response = try await fetch(endpoints.search(query: query, limit: count), with: http)
                let places = try OpenWeatherMapDecoder.places(from: response)
                return Array(table.match(places).cities.prefix(count))
            },
            forecast: { (city) throws(WeatherUpstreamError) -> Forecast in
                // Both answers are needed; asked at once, so a forecast takes one round trip.
                async let current = outcome(endpoints.currentWeather(latitude: city.lat, longitude: city.lon), http)
                async let steps = outcome(endpoints.forecast(latitude: city.lat, longitude: city.lon), http)
                let (currentAnswer, forecastAnswer) = await (current, steps)
                return try OpenWeatherMapDecoder.forecast(
                    current: try currentAnswer.get(), forecast: try forecastAnswer.get(), cityID: city.id, fetchedAt: now())
            })
    }

    private static func outcome(_ request: UpstreamRequest, _ http: HTTPClient) async -> Result<UpstreamResponse, WeatherUpstreamError> {
        do throws(WeatherUpstreamError) {
            return .success(try await fetch(request, with: http))
        } catch {
            return .failure(error)
        }
    }
}
