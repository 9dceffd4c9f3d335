/// Where a search's cities or a forecast came from: an upstream, or the embedded table.
public enum CitySource: String, Codable, Sendable, Equatable {
    case openMeteo = "open-meteo"
    case openWeatherMap = "openweathermap"
    case embedded

    /// The source that is the provider.
    public init(_ provider: WeatherProvider) {
        switch provider {
        case .openMeteo: self = .openMeteo
        case .openWeatherMap: self = .openWeatherMap
        }
    }
}
