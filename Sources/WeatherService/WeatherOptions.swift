import Bus
import Foundation
import ServiceKit
import WeatherCore

/// The weather service's own options and what they parse into.
struct WeatherOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(
            "provider", value: "open-meteo|openweathermap|embedded",
            help: "Where cities and forecasts come from; embedded: the city table alone, and only stored forecasts (stale).",
            environment: "WEATHER_PROVIDER",
            default: "open-meteo"),
        OptionSpec(
            "geocoding-url", value: "URL", help: "Open-Meteo's geocoding API.", default: OpenMeteoEndpoints.defaultGeocodingBaseURL.absoluteString),
        OptionSpec(
            "open-meteo-url", value: "URL", help: "Open-Meteo's forecast API.", default: OpenMeteoEndpoints.defaultForecastBaseURL.absoluteString),
        OptionSpec("openweathermap-url", value: "URL", help: "OpenWeatherMap's API.", default: OpenWeatherMapEndpoints.defaultBaseURL.absoluteString),
        OptionSpec(
            "openweathermap-key-file", value: "FILE",
            help: "A file (mode 0600) holding the OpenWeatherMap API key; else the environment's OPENWEATHERMAP_API_KEY."),
        OptionSpec("refresh-interval", value: "S", help: "Seconds between refreshes of the followed cities' forecasts.", default: "1800"),
        OptionSpec("upstream-timeout", value: "S", help: "Seconds before an upstream call gives up.", default: "10"),
    ]

    enum Provider: String {
        case openMeteo = "open-meteo"
        case openWeatherMap = "openweathermap"
        case embedded
    }

    var provider: Provider
    var geocodingURL: URL
    var openMeteoURL: URL
    var openWeatherMapURL: URL
    var keyFile: String?
    var refreshInterval: Duration
    var upstreamTimeout: Duration

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let name = arguments.value("provider") ?? Provider.openMeteo.rawValue
        guard let provider = Provider(rawValue: name) else {
            throw UsageError("--provider must be open-meteo, openweathermap or embedded, got '\(name)'")
        }
        self.provider = provider
        func url(_ option: String, _ fallback: URL) throws(UsageError) -> URL {
            guard let text = arguments.value(option) else { return fallback }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
                throw UsageError("--\(option) must be an http(s) URL, got '\(text)'")
            }
            return url
        }
        func positive(_ option: String, _ fallback: Duration) throws(UsageError) -> Duration {
            guard let value = try arguments.seconds(option) else { return fallback }
            guard value > .zero else { throw UsageError("--\(option) must be a positive number of seconds") }
            return value
        }
        geocodingURL = try url("geocoding-url", OpenMeteoEndpoints.defaultGeocodingBaseURL)
        openMeteoURL = try url("open-meteo-url", OpenMeteoEndpoints.defaultForecastBaseURL)
        openWeatherMapURL = try url("openweathermap-url", OpenWeatherMapEndpoints.defaultBaseURL)
        keyFile = arguments.value("openweathermap-key-file")
        refreshInterval = try positive("refresh-interval", WeatherFeature.defaultRefreshInterval)
        upstreamTimeout = try positive("upstream-timeout", .seconds(10))
        guard upstreamTimeout <= .seconds(25) else {
            throw UsageError("--upstream-timeout must be at most 25 seconds (a request is answered within 30)")
        }
    }

    /// The OpenWeatherMap key: from the key file, else from the environment.
    /// - Throws: ``ConfigurationError`` (exit 78) for a key file others may read, or no key at all.
    func openWeatherMapKey(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationError) -> OpenWeatherMapAPIKey {
        if let keyFile {
            do {
                return try OpenWeatherMapKeyFile.read(keyFile)
            } catch {
                throw ConfigurationError(error.description)
            }
        }
        if let key = environment["OPENWEATHERMAP_API_KEY"]?.trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty {
            return OpenWeatherMapAPIKey(key)
        }
        throw ConfigurationError(
            "--provider openweathermap needs an API key: set OPENWEATHERMAP_API_KEY or give --openweathermap-key-file FILE (mode 0600)")
    }
}
