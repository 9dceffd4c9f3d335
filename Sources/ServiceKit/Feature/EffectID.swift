/// Names a long-running effect or a timer, so a later effect can cancel it.
public struct EffectID: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let name: String
    public init(_ name: String) { self.name = name }
    public init(stringLiteral value: String) { self.name = value }
    public var description: String { name }
}
