/// The process's one SUB socket: local subscriptions by pattern, reference-counted wire
/// prefixes, fan-out of each event to every matching local subscription.
final class SubscriberHandler: IOHandler {
    typealias Sink = @Sendable (BusEvent) -> Void

    struct Local {
        var patterns: [TopicPattern]
        var sink: Sink
        var gaps = GapTracker()
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
    func add(id: Int, patterns: [TopicPattern], sink: @escaping Sink) -> Bool {
        var allExisting = true
        for prefix in Set(patterns.map(\.wirePrefix)) {
            let count = prefixes[prefix, default: 0]
            if count == 0 {
                allExisting = false
                try? socket.subscribe(prefix)
            }
            prefixes[prefix] = count + 1
        }
        locals[id] = Local(patterns: patterns, sink: sink)
        return allExisting
    }

    func remove(id: Int) {
        guard let local = locals.removeValue(forKey: id) else { return }
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

    func readable(_ loop: IOLoop) {
        for _ in 0..<4096 {
            let frames: Frames
            do {
                guard let received = try socket.receive() else { return }
                frames = received
            } catch {
                loop.logger.error("subscriber receive failed", metadata: ["error": error.description])
                return
            }
            deliver(frames, loop: loop)
        }
    }

    private func deliver(_ frames: Frames, loop: IOLoop) {
        guard let event = try? BusEvent.decode(frames) else {
            malformed += 1
            return
        }
        for id in locals.keys {
            guard locals[id]!.patterns.contains(where: { $0.matches(event.topic) }) else { continue }
            var copy = event
            copy.missed = locals[id]!.gaps.record(event)
            locals[id]!.sink(copy)
        }
    }

    func tick(_ loop: IOLoop, now: ContinuousClock.Instant) -> ContinuousClock.Instant? { nil }

    func close(_ loop: IOLoop) {
        loop.release(socket)
        socket.close()
    }
}
