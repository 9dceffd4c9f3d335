import Foundation
import ServiceKit

@testable import WeatherCore

/// Cities and forecasts for the reducer tests, decoded from the fixtures with the real decoders.
enum WeatherTestData {
    static let zurich = City(
        id: 2_657_896, name: "Zürich", country: "CH", admin1: "Zurich", lat: 47.36667, lon: 8.55, timezone: "Europe/Zurich", population: 341_730)
    static let bern = City(
        id: 2_661_552, name: "Bern", country: "CH", admin1: "Bern", lat: 46.94809, lon: 7.44744, timezone: "Europe/Zurich", population: 121_631)

    static func table() throws -> CityTable { try CityTable.embedded() }

    /// The Open-Meteo fixture as the forecast of `city`.
    static func forecast(_ city: City, fetchedAt: Date = Fixture.fetchedAt) throws -> Forecast {
        try OpenMeteoDecoder.forecast(from: Fixture.response("open-meteo-forecast"), cityID: city.id, fetchedAt: fetchedAt)
    }

    /// A client whose calls wait on `gate` and then answer from `search` and `forecast`.
    static func client(
        gate: Gate? = nil, search: @escaping @Sendable (String, Int) throws(WeatherUpstreamError) -> [City] = { _, _ in [] },
        forecast: @escaping @Sendable (City) throws(WeatherUpstreamError) -> Forecast = { _ throws(WeatherUpstreamError) in
            throw .unreachable(.openMeteo, detail: "no forecast in this test")
        }
    ) -> WeatherClient {
        WeatherClient(
            provider: .openMeteo,
            searchCities: { (query, count) throws(WeatherUpstreamError) in
                await gate?.enter()
                return try search(query, count)
            },
            forecast: { (city) throws(WeatherUpstreamError) in
                await gate?.enter()
                return try forecast(city)
            })
    }
}
