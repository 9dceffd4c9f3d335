/// The `data/2.5/weather` answer, the fields the forecast uses.
struct OpenWeatherMapCurrentResponse: Decodable {
    struct Main: Decodable {
        var temp: Double
        var feelsLike: Double?
        var humidity: Double?
        /// Sea-level pressure, hPa.
        var pressure: Double?

        enum CodingKeys: String, CodingKey {
            case temp
            case feelsLike = "feels_like"
            case humidity, pressure
        }
    }

    struct Wind: Decodable {
        var speed: Double?
        var deg: Double?
    }

    struct Clouds: Decodable {
        var all: Double?
    }

    var dt: Int
    /// The place's offset from UTC in seconds.
    var timezone: Int?
    var weather: [OpenWeatherMapCondition]
    var main: Main
    var wind: Wind?
    var clouds: Clouds?
}
