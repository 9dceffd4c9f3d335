/// One entry of OpenWeatherMap's `weather` array: its own condition id (2xx...8xx) and words.
struct OpenWeatherMapCondition: Decodable {
    var id: Int
    var main: String?
    var description: String?

    /// The description with a capital first letter (`Few clouds`), as the WMO texts read;
    /// `main` when there is no description.
    var text: String {
        let words = description ?? main ?? "Condition \(id)"
        return words.prefix(1).uppercased() + words.dropFirst()
    }
}
