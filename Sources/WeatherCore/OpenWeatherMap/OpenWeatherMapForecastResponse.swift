/// The `data/2.5/forecast` answer (5 days in 3-hour steps), the fields the forecast uses.
struct OpenWeatherMapForecastResponse: Decodable {
    struct Entry: Decodable {
        struct Main: Decodable {
            var temp: Double
        }

        /// Start of the step, Unix seconds.
        var dt: Int
        var main: Main
        var weather: [OpenWeatherMapCondition]
        /// Probability of precipitation, 0...1.
        var pop: Double?
    }

    struct Place: Decodable {
        /// Offset from UTC in seconds.
        var timezone: Int?
    }

    var list: [Entry]
    var city: Place?
}
