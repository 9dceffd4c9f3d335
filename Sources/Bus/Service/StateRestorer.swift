import BusWire
import Foundation

/// Where a restored state came from.
public enum RestoreSource: String, Sendable, Equatable {
    /// The snapshot `persist` saved on disk.
    case persist
    /// The kernel's retained value (newer than what `persist` had, or `persist` did not answer).
    case kernel
}

/// A state value restored at start, with the sequence number and meta of the event that
/// carried it.
public struct Restored<Value: Sendable>: Sendable {
    public let value: Value
    public let seq: UInt64
    public let meta: EventMeta
    public let source: RestoreSource
    /// Whether `persist` answered (with a value or with "nothing saved"); false when it was
    /// down, timed out, failed, or was not asked.
    public let persistAnswered: Bool
}

extension BusClient {
    /// Restores a state topic before a service starts serving: asks `persist` (waiting for it
    /// up to `deadline`: the kernel holds a request for a service with no worker that long)
    /// and, at the same time, the kernel's retained value; takes the newer of the two, and
    /// makes the next publish of `topic` continue after the highest sequence number seen, so
    /// the kernel and `persist` accept it.
    ///
    /// The rule when nothing is found (docs/PERSISTENCE.md):
    /// - `persist` answered that it has nothing and the kernel has nothing: the state is new;
    ///   returns nil and the service starts from its initial value.
    /// - `persist` did not answer (down, timed out, failing) and the kernel has nothing: the
    ///   saved state is unknown. Returns nil and marks the topic provisional: every retained
    ///   publish of it carries the `provisional` flag, and `persist` never lets a provisional
    ///   value replace a saved one (it still records it in the history). The mark stays until
    ///   a later `restore` of the topic reaches `persist`.
    /// A value that is itself provisional is only preferred when nothing else is found.
    ///
    /// - Parameters:
    ///   - topic: the state topic (`auth.state`).
    ///   - deadline: how long to wait for `persist`.
    ///   - service: the persistence service's name.
    /// - Returns: the restored value, or nil as above.
    /// - Throws: ``BusError/invalidTopic(_:reason:)``, ``BusError/invalidPayload(_:)`` when the
    ///   stored value is not a `Value` (rather than starting empty and overwriting it).
    public func restore<Value: Decodable & Sendable>(
        _ topic: String, as type: Value.Type = Value.self, deadline: Duration = .seconds(5), service: String = "persist"
    ) async throws(BusError) -> Restored<Value>? {
        guard let raw = try await restorePayload(topic, deadline: deadline, service: service) else { return nil }
        let value: Value
        do {
            value = try JSONDecoder().decode(Value.self, from: Data(raw.value))
        } catch {
            throw .invalidPayload("the saved value of '\(topic)' (seq \(raw.seq), from \(raw.source.rawValue)) is not a \(Value.self): \(error)")
        }
        return Restored(value: value, seq: raw.seq, meta: raw.meta, source: raw.source, persistAnswered: raw.persistAnswered)
    }

    /// As ``restore(_:as:deadline:service:)``, with the saved JSON payload's bytes exactly as
    /// they were published (no decoding, so no number loses precision on the way).
    ///
    /// `askingPersist: false` skips `persist` and treats it as not answering (the provisional
    /// rule applies): for a service restoring many topics after `persist` already failed to
    /// answer one, so the start does not wait `deadline` once per topic.
    public func restorePayload(
        _ topic: String, deadline: Duration = .seconds(5), service: String = "persist", askingPersist: Bool = true
    ) async throws(BusError) -> Restored<[UInt8]>? {
        try Topic.validate(topic)
        async let saved =
            askingPersist
            ? askPersist(topic, service: service, deadline: deadline)
            : .unavailable("not asked: \(service) did not answer an earlier restore of this start")
        async let current = askKernel(topic, timeout: min(deadline, .seconds(2)))
        let (fromPersist, fromKernel) = await (saved, current)

        var candidates: [(value: RetainedValue, source: RestoreSource)] = []
        if case .value(let value) = fromPersist { candidates.append((value, .persist)) }
        if case .value(let value) = fromKernel { candidates.append((value, .kernel)) }
        let persistAnswered: Bool
        if case .unavailable = fromPersist { persistAnswered = false } else { persistAnswered = true }

        // Prefer a value that is not provisional, then the higher seq, then persist's.
        let best = candidates.min { a, b in
            let pa = a.value.meta.flags.contains(.provisional), pb = b.value.meta.flags.contains(.provisional)
            if pa != pb { return !pa }
            if a.value.meta.seq != b.value.meta.seq { return a.value.meta.seq > b.value.meta.seq }
            return a.source == .persist
        }
        guard let best else {
            if case .unavailable(let reason) = fromPersist {
                setProvisional(topic, true)
                logger.warning(
                    "could not restore \(topic): \(service) did not answer (\(reason)) and the kernel holds no value; its publishes are provisional and will not replace saved state"
                )
            } else {
                setProvisional(topic, false)
                logger.info("nothing saved for \(topic); starting from the initial value")
            }
            return nil
        }
        let highest = candidates.map(\.value.meta.seq).max() ?? best.value.meta.seq
        continueSequence(topic, after: highest)
        setProvisional(topic, !persistAnswered && best.value.meta.flags.contains(.provisional))
        logger.info(
            "restored \(topic)",
            metadata: [
                "seq": String(best.value.meta.seq), "source": best.source.rawValue, "persist": persistAnswered ? "answered" : "unavailable",
            ])
        return Restored(
            value: best.value.payload, seq: best.value.meta.seq, meta: best.value.meta, source: best.source, persistAnswered: persistAnswered)
    }

    private enum RestoreAnswer: Sendable {
        case value(RetainedValue)
        case none
        case unavailable(String)
    }

    private func askPersist(_ topic: String, service: String, deadline: Duration) async -> RestoreAnswer {
        let reply: ReplyBody
        do {
            reply = try await call(service, "restore", payload: Array("{\"topic\":\(Self.jsonString(topic))}".utf8), timeout: deadline)
        } catch {
            return .unavailable(error.description)
        }
        if reply.status == Status.notFound, reply.errorBody.code == "not_found" { return .none }
        guard Status.isSuccess(reply.status) else {
            return .unavailable("\(reply.status) \(reply.errorBody.code): \(reply.errorBody.message)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.payload)), let value = try? RetainedValue.from(jsonObject: object)
        else {
            return .unavailable("\(service).restore answered something that is not a stored value")
        }
        return .value(value)
    }

    private func askKernel(_ topic: String, timeout: Duration) async -> RestoreAnswer {
        do {
            guard let value = try await retained(topic, timeout: timeout) else { return .none }
            return .value(value)
        } catch {
            return .unavailable(error.description)
        }
    }
}

extension ServiceContext {
    /// Restores a state topic before serving; see ``BusClient/restore(_:as:deadline:service:)``.
    ///
    /// ```swift
    /// let restored = try await context.restore("ctr.state", as: Counter.self, deadline: .seconds(5))
    /// var counter = restored?.value ?? Counter(value: 0)
    /// ```
    public func restore<Value: Decodable & Sendable>(
        _ topic: String, as type: Value.Type = Value.self, deadline: Duration = .seconds(5), service: String = "persist"
    ) async throws(BusError) -> Restored<Value>? {
        try await bus.restore(topic, as: type, deadline: deadline, service: service)
    }
}
