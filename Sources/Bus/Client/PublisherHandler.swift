/// The process's publishing socket towards the kernel's XSUB. It is an XPUB, not a PUB, so that
/// it sees the kernel's subscribe-all arrive: a PUB silently drops what is published before
/// its peer's subscription reaches it (the slow-joiner problem), so events are held until the
/// kernel has subscribed, then sent in order.
final class PublisherHandler: IOHandler {
    let socket: ZMQSocket
    private var live = false
    private var held: [Frames] = []
    private let maxHeld: Int
    private(set) var dropped: UInt64 = 0
    /// Events waiting for the kernel's subscription.
    var isHolding: Bool { !held.isEmpty }

    init(loop: IOLoop, maxHeld: Int = 100_000) throws(ZMQError) {
        socket = try loop.connect(.xpub, to: loop.endpoints.eventsIn, tuning: .default)
        self.maxHeld = maxHeld
    }

    func publish(_ batch: [Frames], loop: IOLoop) {
        guard live else {
            let room = max(0, maxHeld - held.count)
            held.append(contentsOf: batch.prefix(room))
            if batch.count > room {
                dropped += UInt64(batch.count - room)
                loop.logger.warning("kernel not subscribed yet; dropped \(batch.count - room) event(s) beyond \(maxHeld) held")
            }
            return
        }
        for frames in batch { send(frames, loop: loop) }
    }

    private func send(_ frames: Frames, loop: IOLoop) {
        do {
            if try !socket.send(frames) { dropped += 1 }
        } catch {
            dropped += 1
            loop.logger.error("publish failed", metadata: ["error": error.description])
        }
    }

    func readable(_ loop: IOLoop) {
        while let frames = try? socket.receive() {
            // [0x01 prefix] subscribe / [0x00 prefix] unsubscribe, from the kernel's XSUB.
            guard let first = frames.first?.first else { continue }
            if first == 1 && !live {
                live = true
                let pending = held
                held.removeAll()
                for frames in pending { send(frames, loop: loop) }
            }
        }
    }

    func tick(_ loop: IOLoop, now: ContinuousClock.Instant) -> ContinuousClock.Instant? { nil }

    func close(_ loop: IOLoop) {
        loop.release(socket)
        if !held.isEmpty {
            loop.logger.warning("closing with \(held.count) event(s) never sent: the kernel never subscribed")
        }
        socket.close()
    }
}
