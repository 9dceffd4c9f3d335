/// The User-Agent Reddit requires: `<platform>:<app ID>:<version> (by /u/<user>)`. Generic agents
/// are throttled hard, so every request carries this one.
public struct RedditUserAgent: Sendable, Equatable, CustomStringConvertible {
    public let platform: String
    public let appID: String
    public let version: String
    public let username: String

    /// `linux:swiftbus-feed:0.1.0 (by /u/swiftbus)`.
    public static let `default` = RedditUserAgent(uncheckedPlatform: "linux", appID: "swiftbus-feed", version: "0.1.0", username: "swiftbus")

    /// - Throws: ``RedditError/invalidInput(field:value:rule:)`` when a part is empty, holds a
    ///   `:`, a space or a control character, or the username is not a Reddit username.
    public init(platform: String, appID: String, version: String, username: String) throws(RedditError) {
        for (field, value) in [("platform", platform), ("app_id", appID), ("version", version)] {
            let valid = !value.isEmpty && value.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != ":" }
            guard valid else { throw .invalidInput(field: field, value: value, rule: "printable ASCII without spaces or ':'") }
        }
        self.init(uncheckedPlatform: platform, appID: appID, version: version, username: try RedditNames.username(username))
    }

    private init(uncheckedPlatform platform: String, appID: String, version: String, username: String) {
        self.platform = platform
        self.appID = appID
        self.version = version
        self.username = username
    }

    /// The header value.
    public var description: String { "\(platform):\(appID):\(version) (by /u/\(username))" }
}
