extension WeatherFeature {
    /// A `refresh` request's cities still being fetched, and how those done went.
    public struct RefreshProgress: Codable, Equatable, Sendable {
        /// The cities whose fetch has not ended.
        public var pending: Set<Int>
        /// The cities in followed order, the order of the reply.
        public var order: [Int]
        /// The cities whose fetch failed, and why.
        public var failed: [Int: RefreshReply.Failure] = [:]
    }
}
