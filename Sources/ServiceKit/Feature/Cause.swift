/// Why the store is handling an action: the request, observed event, timer or start that led
/// to it. Actions an effect sends back keep the cause of the action that started the effect,
/// so every publish along a chain carries the id of what began it (its causation id).
public struct Cause: Sendable, Equatable, CustomStringConvertible {
    /// What kind of thing began the chain.
    public enum Kind: String, Sendable, Equatable {
        case request, event, timer, start, test
    }

    public var kind: Kind
    /// The causation id written on the publishes this action leads to: the request's id, the
    /// observed event's `topic#seq`, the timer's name.
    public var id: String
    /// Carried through from the request or event that began the chain (empty when none).
    public var correlationID: String
    /// The waiting request, when the chain began with one.
    public var request: RequestID?

    public init(kind: Kind, id: String, correlationID: String = "", request: RequestID? = nil) {
        self.kind = kind
        self.id = id
        self.correlationID = correlationID
        self.request = request
    }

    public var description: String { "\(kind.rawValue) \(id)" }
}
