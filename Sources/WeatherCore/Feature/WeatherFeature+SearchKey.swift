import Foundation

extension WeatherFeature {
    /// What makes two searches the same upstream call: the query folded to lower case and
    /// trimmed, and the count.
    public struct SearchKey: Codable, Hashable, Sendable, CustomStringConvertible {
        /// The query, trimmed and lowercased.
        public var query: String
        /// How many results were asked for.
        public var count: Int

        public init(query: String, count: Int) {
            self.query = query.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            self.count = count
        }

        public var description: String { "\(count):\(query)" }
    }
}
