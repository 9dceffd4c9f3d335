// The weather service: city search (Open-Meteo, or OpenWeatherMap, with the embedded GeoNames
// table as fallback), forecasts, and followed cities kept on `weather.state` and
// `weather.forecast.<id>`, refreshed on a timer.
import Bus
import Foundation
import ServiceKit
import WeatherCore

await FeatureService.run(
    name: "weather", overview: "City search, forecasts and followed cities (Open-Meteo, OpenWeatherMap, embedded GeoNames table).",
    options: WeatherOptions.specs
) { (context: ServiceContext) async throws -> ServiceDefinition<WeatherFeature> in
    let options = try WeatherOptions(context.arguments)
    let logger = context.logger
    let table: CityTable
    do throws(CityTableError) {
        table = try CityTable.embedded()
    } catch {
        throw ConfigurationError(error.description)
    }
    let http = HTTPClient.live(timeout: options.upstreamTimeout, userAgent: "swiftbus-weather/1.0")
    let now: @Sendable () -> Date = { Date() }
    let client: WeatherClient?
    switch options.provider {
    case .openMeteo:
        client = .openMeteo(OpenMeteoEndpoints(geocodingBaseURL: options.geocodingURL, forecastBaseURL: options.openMeteoURL), http: http, now: now)
        logger.info(
            "provider open-meteo", metadata: ["geocoding": options.geocodingURL.absoluteString, "forecast": options.openMeteoURL.absoluteString])
    case .openWeatherMap:
        let key = try options.openWeatherMapKey()
        client = .openWeatherMap(OpenWeatherMapEndpoints(baseURL: options.openWeatherMapURL, apiKey: key), table: table, http: http, now: now)
        // The key is never logged: only where it came from.
        logger.info(
            "provider openweathermap",
            metadata: ["url": options.openWeatherMapURL.absoluteString, "key_from": options.keyFile == nil ? "environment" : "key file"])
    case .embedded:
        client = nil
        logger.info("provider embedded: searches use the city table alone, forecasts are only the stored ones")
    }
    var service = WeatherServiceDefinition.make(feature: WeatherFeature(client: client, table: table, refreshInterval: options.refreshInterval))
    service.use(.logging(logger))
    return service
}
