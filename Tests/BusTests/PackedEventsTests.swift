import Testing

@testable import Bus
@testable import BusWire
@testable import BusZMQ

/// The publisher's packed queue: what goes in comes out of a real socket frame for frame, in
/// order, with small frames copied and large ones referenced.
struct PackedEventsTests {
    /// A PUSH bound on a private inproc address and, unless `connected` is false, a PULL on it.
    final class Pair {
        let context = ZMQContext(ioThreads: 0)
        let push: ZMQSocket
        var pull: ZMQSocket?
        let endpoint = "inproc://packed-\(UInt64.random(in: 0...UInt64.max))"

        init(connected: Bool = true) throws {
            push = try ZMQSocket(context, .push)
            try push.bind(endpoint)
            if connected { try connect() }
        }

        func connect() throws {
            let socket = try ZMQSocket(context, .pull)
            try socket.connect(endpoint)
            pull = socket
        }

        func receive() throws -> Frames? { try pull?.receive(dontWait: true) }

        func close() {
            push.close()
            pull?.close()
            context.terminate()
        }
    }

    let tail = EventMeta.encodeTail(
        source: "feed", instance: "feed-1", contentType: "application/json", correlationID: "c1", causationID: "")

    /// The meta frame `append(topic:...)` must produce.
    func meta(flags: EventMeta.Flags, seq: UInt64, time: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        EventMeta.write(flags: flags, seq: seq, timestampMicros: time, tail: tail, to: &out)
        return out
    }

    @Test func events_comeOutOfTheSocketFrameForFrame_inOrder() throws {
        let pair = try Pair()
        defer { pair.close() }
        let small = Array("{\"n\":1}".utf8)
        let large = (0..<(PackedEvents.inlineLimit + 1)).map { UInt8(truncatingIfNeeded: $0) }
        let events = PackedEvents(capacity: 64)
        events.append(
            topic: Array("feed.post".utf8), flags: [.retained], seq: 7, timestampMicros: 1_700_000_000_000_001, metaTail: tail, payload: small)
        events.append(frames: [Array("a".utf8), [], large, Array("d".utf8)])
        events.append(topic: Array("feed.big".utf8), flags: [], seq: 8, timestampMicros: 2, metaTail: tail, payload: large)
        events.append(topic: Array("feed.empty".utf8), flags: [], seq: 9, timestampMicros: 3, metaTail: tail, payload: [])
        #expect(events.count == 4)
        #expect(events.capacity > 64)

        var cursor = PackedEvents.Cursor()
        while !events.isFinished(cursor) { #expect(try events.send(at: &cursor, on: pair.push)) }
        #expect(cursor.event == 4)

        let first = try #require(try pair.receive())
        #expect(first == [Array("feed.post".utf8), meta(flags: [.retained], seq: 7, time: 1_700_000_000_000_001), small])
        let decoded = try EventMeta.decode(first[1])
        #expect(decoded.seq == 7 && decoded.source == "feed" && decoded.correlationID == "c1" && decoded.isRetained)
        #expect(try pair.receive() == [Array("a".utf8), [], large, Array("d".utf8)])
        #expect(try pair.receive() == [Array("feed.big".utf8), meta(flags: [], seq: 8, time: 2), large])
        #expect(try pair.receive() == [Array("feed.empty".utf8), meta(flags: [], seq: 9, time: 3), []])
        #expect(try pair.receive() == nil)
    }

    @Test func send_whenTheSocketWouldBlock_sendsNothingAndKeepsTheCursor() throws {
        // A PUSH with no peer refuses at once (EAGAIN without waiting).
        let pair = try Pair(connected: false)
        defer { pair.close() }
        let events = PackedEvents()
        events.append(frames: [Array("one".utf8)])
        events.append(frames: [Array("two".utf8), Array("2".utf8)])
        var cursor = PackedEvents.Cursor()
        #expect(try !events.send(at: &cursor, on: pair.push))
        #expect(cursor.event == 0)
        try pair.connect()
        // The PUSH learns of its peer when it next processes commands, which libzmq throttles
        // (about a millisecond between checks): retry until then, as the publisher's loop does.
        let deadline = ContinuousClock.now + .seconds(5)
        while try !events.send(at: &cursor, on: pair.push), ContinuousClock.now < deadline {
            #expect(cursor.event == 0)
        }
        #expect(cursor.event == 1)
        #expect(try events.send(at: &cursor, on: pair.push))
        #expect(events.isFinished(cursor))
        #expect(try pair.receive() == [Array("one".utf8)])
        #expect(try pair.receive() == [Array("two".utf8), Array("2".utf8)])
    }

    @Test func removeAll_keepsTheMemory_andTheBufferIsReusable() throws {
        let pair = try Pair()
        defer { pair.close() }
        let events = PackedEvents(capacity: 32)
        for seq in 1...100 {
            events.append(topic: Array("t".utf8), flags: [], seq: UInt64(seq), timestampMicros: 0, metaTail: tail, payload: [UInt8(seq)])
        }
        let grown = events.capacity
        events.removeAll()
        #expect(events.isEmpty && events.capacity == grown)
        events.append(topic: Array("t".utf8), flags: [], seq: 101, timestampMicros: 0, metaTail: tail, payload: [101])
        var cursor = PackedEvents.Cursor()
        #expect(try events.send(at: &cursor, on: pair.push))
        #expect(events.isFinished(cursor))
        #expect(try pair.receive() == [Array("t".utf8), meta(flags: [], seq: 101, time: 0), [101]])
    }
}

/// `send(event:)` takes frames as they are: an event with none is refused before it is queued.
struct SendEventTests {
    @Test func sendEvent_withNoFrames_throwsMalformed() async throws {
        // Nothing listens here: the client never connects, as the event is refused first.
        let endpoints = Endpoints(requests: "inproc://none-req", eventsIn: "inproc://none-in", eventsOut: "inproc://none-out")
        let client = BusClient(options: BusOptions(endpoints: endpoints, name: "t"))
        #expect {
            try client.send(event: [])
        } throws: { error in
            guard case BusError.malformed(let what) = error else { return false }
            return what.contains("at least one frame")
        }
        await client.close()
    }
}
