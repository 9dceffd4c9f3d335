/// An OpenWeatherMap API key (`appid`). It prints as `REDACTED`, so it cannot leak through
/// string interpolation or a dump of a value that holds it.
public struct OpenWeatherMapAPIKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The key itself: only for building request URLs.
    public let value: String

    public init(_ value: String) {
        self.value = value
    }

    public var description: String { Redaction.placeholder }
    public var debugDescription: String { Redaction.placeholder }
}
