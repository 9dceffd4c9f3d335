import CZeroMQ
import Foundation

/// The process's one SUB socket: local subscriptions by pattern, reference-counted wire
/// prefixes, fan-out of each event to every matching local subscription.
final class SubscriberHandler: IOHandler {
    /// A class, so that filling `pending` while iterating the subscriptions mutates in place
    /// (a struct in a dictionary being iterated is copied on every write).
    final class Local {
        let patterns: [TopicPattern]
        let channel: EventChannel
        var gaps = GapTracker()
        var pending: [BusEvent] = []

        init(patterns: [TopicPattern], channel: EventChannel) {
            self.patterns = patterns
            self.channel = channel
        }
    }

    let socket: ZMQSocket
    private var locals: [Int: Local] = [:]
    private var prefixes: [[UInt8]: Int] = [:]
    var malformed: UInt64 = 0

    init(loop: IOLoop) throws(ZMQError) {
        socket = try loop.connect(.sub, to: loop.endpoints.eventsOut, tuning: .client)
    }

    /// Adds a local subscription. Returns true when every wire prefix it needs was already
    /// subscribed (so the kernel will not send snapshots for it: fetch retained values instead).
    func add(id: Int, patterns: [TopicPattern], channel: EventChannel) -> Bool {
        var allExisting = true
        for prefix in Set(patterns.map(\.wirePrefix)) {
            let count = prefixes[prefix, default: 0]
            if count == 0 {
                allExisting = false
                try? socket.subscribe(prefix)
            }
            prefixes[prefix] = count + 1
        }
        locals[id] = Local(patterns: patterns, channel: channel)
        return allExisting
    }

    func remove(id: Int) {
        guard let local = locals.removeValue(forKey: id) else { return }
        local.channel.finish()
        for prefix in Set(local.patterns.map(\.wirePrefix)) {
            let count = prefixes[prefix, default: 1] - 1
            if count <= 0 {
                prefixes[prefix] = nil
                try? socket.unsubscribe(prefix)
            } else {
                prefixes[prefix] = count
            }
        }
    }

    /// Frames are read in place from libzmq's buffers: only the payload is copied (it becomes
    /// the event's), the topic and meta are compared with the previous event's and decoded
    /// without copies when they repeat.
    private let parts = ZMQParts(capacity: 4)

    /// Reads what is waiting (up to a bound), then hands each subscription its batch.
    func readable(_ loop: IOLoop) {
        for _ in 0..<4096 {
            let count: Int
            do {
                guard let received = try parts.receive(socket) else { break }
                count = received
            } catch {
                loop.logger.error("subscriber receive failed", metadata: ["error": error.description])
                break
            }
            collect(frameCount: count)
        }
        for local in locals.values where !local.pending.isEmpty {
            local.channel.push(local.pending)
            local.pending.removeAll(keepingCapacity: true)
        }
    }

    private var metaCache = EventMeta.DecodeCache()

    /// The last topic's bytes and string: consecutive events usually share their topic.
    private var lastTopic: (bytes: [UInt8], text: String) = ([], "")

    private func topic(_ bytes: UnsafeRawBufferPointer) -> String? {
        if !bytes.isEmpty, lastTopic.bytes.hasSameBytes(as: bytes) { return lastTopic.text }
        guard let text = UTF8Text.string(bytes.bindMemory(to: UInt8.self)) else { return nil }
        lastTopic = (Array(bytes), text)
        return text
    }

    private func collect(frameCount: Int) {
        guard frameCount == 3, let topic = topic(parts.bytes(0)),
            let meta = try? EventMeta.decode(parts.bytes(1), cache: &metaCache)
        else {
            malformed += 1
            return
        }
        var event = BusEvent(topic: topic, meta: meta, payload: Array(parts.bytes(2)))
        for local in locals.values where local.patterns.contains(where: { $0.matches(topic) }) {
            event.missed = local.gaps.record(event)
            local.pending.append(event)
        }
    }

    func tick(_ loop: IOLoop, now: ContinuousClock.Instant) -> ContinuousClock.Instant? { nil }

    func close(_ loop: IOLoop) {
        loop.release(socket)
        socket.close()
        parts.close()
    }
}
