import Foundation

/// A token, password or client secret. Printing, interpolating, dumping or mirroring it shows
/// only its size, so a secret that reaches a log line or an error message by mistake does not
/// leak; ``revealed`` is the one explicit way to the value. Encodes as a plain JSON string (for
/// the token file and the `token` reply).
public struct Secret: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret value. Use it only where the value must leave the process on purpose.
    public let revealed: String

    public init(_ value: String) { revealed = value }

    public init(from decoder: Decoder) throws {
        revealed = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(revealed)
    }

    public var isEmpty: Bool { revealed.isEmpty }
    public var description: String { "<secret: \(revealed.utf8.count) bytes>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
