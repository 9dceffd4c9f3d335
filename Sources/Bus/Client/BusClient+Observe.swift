import BusWire
import Foundation

/// One value of an observed state topic.
public struct Observed<Value: Sendable>: Sendable {
    public let value: Value
    /// The sequence number of the event that carried the value.
    public let seq: UInt64
    public let meta: EventMeta
    /// How the value arrived.
    public let origin: ObservedOrigin
}

/// How an observed value arrived.
public enum ObservedOrigin: Sendable, Equatable {
    /// A live change.
    case live
    /// The current value when observation began (from the kernel's retained store).
    case current
    /// Re-fetched after a gap in sequence numbers was detected.
    case healed
}

enum ObserveInput: Sendable {
    case event(BusEvent)
    case fetched(RetainedValue?, ObservedOrigin)
}

extension BusClient {
    /// Observes a retained state topic the way SwiftUI observes `$state`: the current value
    /// at once, then every change, with no gap and no duplicate.
    ///
    /// It subscribes first, then fetches the retained value, and delivers only sequence numbers
    /// higher than the last delivered; when a sequence number is skipped it delivers the newer
    /// value and re-fetches the retained one, so a lost event is healed, never passed over.
    /// The subscription travels to the kernel asynchronously, like any other: changes made
    /// before it lands arrive folded into the newest value (the kernel sends it when the
    /// subscription lands); ``confirmSubscriptions(timeout:)`` waits until it has landed.
    /// A consumer slower than the changes skips intermediate values but always ends on the
    /// latest (the buffer keeps the newest). Payloads that do not decode as `Value` are logged
    /// and skipped.
    /// - Throws: ``BusError/invalidTopic(_:reason:)``, ``BusError/closed``.
    public func observe<Value: Decodable & Sendable>(
        _ topic: String, as type: Value.Type = Value.self
    ) throws(BusError) -> AsyncStream<Observed<Value>> {
        try Topic.validate(topic)
        let (inbox, feed) = AsyncStream<ObserveInput>.makeStream(bufferingPolicy: .bufferingNewest(options.subscriptionBuffer))
        let (output, deliver) = AsyncStream<Observed<Value>>.makeStream(bufferingPolicy: .bufferingNewest(options.subscriptionBuffer))
        let pattern = try TopicPattern(topic)
        // Newest-value semantics: a full buffer drops (reported, healed by a fetch) rather than
        // holding the process's intake.
        let subscription = try subscribe([pattern], bufferSize: options.subscriptionBuffer, holdsIntake: false, onExisting: nil)
        let logger = self.logger

        let fetch: @Sendable (ObservedOrigin) -> Void = { [weak self] origin in
            guard let self else { return }
            Task {
                do {
                    feed.yield(.fetched(try await self.retained(topic), origin))
                } catch {
                    logger.warning("observe(\(topic)): could not fetch the retained value", metadata: ["error": "\(error)"])
                }
            }
        }
        let pump = Task {
            for await event in subscription { feed.yield(.event(event)) }
            feed.finish()
        }
        let consumer = Task {
            var last: UInt64 = 0
            fetch(.current)
            for await input in inbox {
                let event: (meta: EventMeta, payload: EventPayload, origin: ObservedOrigin)
                switch input {
                case .event(let live):
                    guard live.topic == topic, live.meta.seq > last else { continue }
                    let gap = live.missed > 0 || (last != 0 && live.meta.seq > last + 1 && !live.isSnapshot)
                    if gap { fetch(.healed) }
                    event = (live.meta, live.payload, live.isSnapshot ? .current : .live)
                case .fetched(let value, let origin):
                    guard let value, value.meta.seq > last else { continue }
                    event = (value.meta, EventPayload(value.payload), origin)
                }
                last = event.meta.seq
                do {
                    let decoded = try event.payload.decodeJSON(Value.self)
                    deliver.yield(Observed(value: decoded, seq: event.meta.seq, meta: event.meta, origin: event.origin))
                } catch {
                    logger.warning("observe(\(topic)): seq \(event.meta.seq) is not a \(Value.self); skipped")
                }
            }
            deliver.finish()
        }
        deliver.onTermination = { _ in
            pump.cancel()
            consumer.cancel()
            feed.finish()
        }
        return output
    }
}
