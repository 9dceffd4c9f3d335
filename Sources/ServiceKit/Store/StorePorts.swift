import Bus
import Foundation

/// What a ``Store`` does on the bus, as closures: the bus itself at run time, a recorder in
/// the runtime's unit tests.
public struct StorePorts: Sendable {
    /// Publishes one event: a retained state value (`retain`) or a change event, with the
    /// cause's id as its causation id.
    public var publish: @Sendable (_ topic: String, _ payload: [UInt8], _ retain: Bool, _ cause: Cause) async throws -> Void
    /// The saved JSON value of a state topic, nil when nothing is saved.
    public var restore: @Sendable (_ topic: String) async throws -> [UInt8]?

    public init(
        publish: @escaping @Sendable (_ topic: String, _ payload: [UInt8], _ retain: Bool, _ cause: Cause) async throws -> Void,
        restore: @escaping @Sendable (_ topic: String) async throws -> [UInt8]?
    ) {
        self.publish = publish
        self.restore = restore
    }

    /// The bus: ``BusClient/restorePayload(_:deadline:service:)`` (persist and the kernel's
    /// retained value, the provisional rule included) and ``BusClient/publish(_:payload:retain:contentType:correlationID:causationID:flags:)``.
    public static func bus(_ client: BusClient, restoreDeadline: Duration = .seconds(5)) -> StorePorts {
        StorePorts(
            publish: { topic, payload, retain, cause in
                try await client.publish(topic, payload: payload, retain: retain, correlationID: cause.correlationID, causationID: cause.id)
            },
            restore: { topic in
                try await client.restorePayload(topic, deadline: restoreDeadline)?.value
            })
    }
}
