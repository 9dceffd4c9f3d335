/// A property parameter: a name and one or more values (`MEMBER="a","b"`).
struct ContentLineParameter: Equatable, Sendable {
    var name: String
    var values: [String]
}
