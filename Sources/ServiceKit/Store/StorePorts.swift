import Bus
import Foundation
import Synchronization

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

    /// The bus: ``BusClient/restorePayload(_:deadline:service:askingPersist:)`` (persist and
    /// the kernel's retained value, the provisional rule included) and
    /// ``BusClient/publish(_:payload:retain:contentType:correlationID:causationID:flags:)``.
    ///
    /// Once `persist` has not answered one restore, the later topics of the same ports are
    /// restored from the kernel alone (and marked provisional where the kernel has nothing):
    /// a service with many state topics starts in about one `restoreDeadline` while `persist`
    /// is down, not one per topic.
    public static func bus(_ client: BusClient, restoreDeadline: Duration = .seconds(5)) -> StorePorts {
        let persistSilent = Mutex(false)
        return StorePorts(
            publish: { topic, payload, retain, cause in
                try await client.publish(topic, payload: payload, retain: retain, correlationID: cause.correlationID, causationID: cause.id)
            },
            restore: { topic in
                let asking = !persistSilent.withLock { $0 }
                let restored = try await client.restorePayload(topic, deadline: restoreDeadline, askingPersist: asking)
                if asking, let restored, !restored.persistAnswered {
                    persistSilent.withLock { $0 = true }
                } else if asking, restored == nil, client.isProvisional(topic) {
                    persistSilent.withLock { $0 = true }
                }
                return restored?.value
            })
    }
}
