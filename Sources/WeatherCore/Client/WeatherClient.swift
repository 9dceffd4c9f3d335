import Foundation
import ServiceKit

/// The weather upstream as a dependency, a struct of closures as the TCA seed's `WeatherClient`:
/// a city search and a forecast for a city. The live values call Open-Meteo or OpenWeatherMap
/// through an ``HTTPClient``; tests build one from closures or point a live one at a local
/// server that speaks the provider's JSON.
public struct WeatherClient: Sendable {
    /// The provider the answers come from.
    public var provider: WeatherProvider
    /// Cities whose name matches the query, at most `count`, in the provider's order.
    public var searchCities: @Sendable (_ query: String, _ count: Int) async throws(WeatherUpstreamError) -> [City]
    /// The forecast for the city, fetched now.
    public var forecast: @Sendable (_ city: City) async throws(WeatherUpstreamError) -> Forecast

    public init(
        provider: WeatherProvider,
        searchCities: @escaping @Sendable (_ query: String, _ count: Int) async throws(WeatherUpstreamError) -> [City],
        forecast: @escaping @Sendable (_ city: City) async throws(WeatherUpstreamError) -> Forecast
    ) {
        self.provider = provider
        self.searchCities = searchCities
        self.forecast = forecast
    }
}

extension WeatherClient {
    /// Sends a provider request through `http` and hands the answer, whatever its status, to
    /// the provider's decoder; no answer at all becomes ``WeatherUpstreamError/timeout(_:)`` or
    /// ``WeatherUpstreamError/unreachable(_:detail:)``, without the API key.
    static func fetch(_ request: UpstreamRequest, with http: HTTPClient) async throws(WeatherUpstreamError) -> UpstreamResponse {
        do {
            let response = try await http.send(HTTPRequest(method: "GET", url: request.url, headers: ["Accept": "application/json"]))
            return UpstreamResponse(status: response.status, headers: response.headers, body: response.body)
        } catch {
            if error.timedOut { throw .timeout(request.provider) }
            throw .unreachable(request, reason: error.message)
        }
    }
}
