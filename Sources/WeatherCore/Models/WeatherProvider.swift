/// The upstream a forecast or a search result came from.
public enum WeatherProvider: String, Codable, Sendable, CaseIterable {
    case openMeteo = "open-meteo"
    case openWeatherMap = "openweathermap"

    /// The name people know the provider by, for messages.
    public var displayName: String {
        switch self {
        case .openMeteo: return "Open-Meteo"
        case .openWeatherMap: return "OpenWeatherMap"
        }
    }
}
