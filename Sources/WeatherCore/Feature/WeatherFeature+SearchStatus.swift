extension WeatherFeature {
    /// Where a search stands (the seed's `normal`, `loading`, `noResult`, `failed`).
    public enum SearchStatus: Codable, Equatable, Sendable {
        case normal
        case loading
        case noResult
        case failed(String)
    }
}
