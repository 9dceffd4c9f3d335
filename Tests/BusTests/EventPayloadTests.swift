import Foundation
import Testing

@testable import Bus
@testable import BusWire
@testable import BusZMQ

/// An event's payload: a view into a buffer shared with other payloads, that reads, slices,
/// compares and converts like bytes and keeps its own bytes whatever is received after it.
struct EventPayloadTests {
    /// `count` payloads copied through one arena, payload `i` being `size` bytes of value `i`.
    func packed(_ count: Int, size: Int, into arena: inout PayloadArena) -> [EventPayload] {
        (0..<count).map { index in
            let bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size)
            return bytes.withUnsafeBytes { arena.copy($0) }
        }
    }

    @Test func payload_readsConvertsAndComparesLikeItsBytes() throws {
        let text = "{\"n\":1}"
        let payload = EventPayload(Array(text.utf8))
        #expect(payload.count == 7)
        #expect(Array(payload) == Array(text.utf8))
        #expect(payload.bytes == Array(text.utf8))
        #expect(Data(payload) == Data(text.utf8))
        #expect(payload.data == Data(text.utf8))
        #expect(String(decoding: payload, as: UTF8.self) == text)
        #expect(payload.first == UInt8(ascii: "{") && payload[6] == UInt8(ascii: "}"))
        #expect(payload.withUnsafeBytes { Array($0) } == Array(text.utf8))
        #expect(payload == Array(text.utf8) && Array(text.utf8) == payload)
        #expect(payload != Array("{\"n\":2}".utf8))
        #expect(payload.description == "7 bytes")
        let empty: EventPayload = []
        #expect(empty.isEmpty && empty == EventPayload() && empty == [UInt8]() && Array(empty) == [])
        #expect(EventPayload(Data([1, 2])) == [1, 2])
    }

    @Test func equality_comparesBytes_wherever_theyLive() {
        var arena = PayloadArena()
        let shared = [UInt8]([1, 2, 3]).withUnsafeBytes { arena.copy($0) }
        let own: EventPayload = [1, 2, 3]
        #expect(shared == own)
        #expect(shared.hashValue == own.hashValue)
        #expect(Set([shared, own]).count == 1)
        #expect(shared != EventPayload([1, 2]))
        #expect(shared != EventPayload([1, 2, 4]))
    }

    @Test func slicing_keepsPositions_andExtractingStartsAtZero() {
        let payload: EventPayload = [10, 11, 12, 13, 14]
        let slice = payload[1..<4]
        #expect(slice.startIndex == 1 && Array(slice) == [11, 12, 13])
        let extracted = payload.extracting(1..<4)
        #expect(extracted.startIndex == 0 && extracted.count == 3)
        #expect(extracted == [11, 12, 13] && extracted[0] == 11)
        #expect(extracted.extracting(2..<3) == [13])
        #expect(payload.extracting(5..<5).isEmpty)
        #expect(payload.extracting(0..<5) == payload)
    }

    @Test func arena_packsSmallPayloadsBackToBack_eachKeepingItsBytes() {
        var arena = PayloadArena()
        // Several shared buffers' worth, and sizes that do not divide the buffer.
        let size = 100
        let payloads = packed(3 * PayloadArena.chunkSize / size, size: size, into: &arena)
        for (index, payload) in payloads.enumerated() {
            #expect(payload == [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size))
        }
        let large = [UInt8](repeating: 7, count: PayloadArena.ownBufferAbove + 1)
        let own = large.withUnsafeBytes { arena.copy($0) }
        #expect(own == large)
        let empty = [UInt8]().withUnsafeBytes { arena.copy($0) }
        #expect(empty.isEmpty)
    }

    @Test func compacted_isEqual_andOutlivesTheArena() {
        var payload: EventPayload
        do {
            var arena = PayloadArena()
            _ = packed(10, size: 50, into: &arena)
            let shared = packed(1, size: 50, into: &arena)[0]
            payload = shared.compacted()
            // A buffer of its own: it does not keep the arena's 16 KiB alive.
            let sharedStart = shared.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
            let ownStart = payload.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
            let arenaStart = sharedStart - 10 * 50
            #expect(ownStart + 50 <= arenaStart || ownStart >= arenaStart + UInt(PayloadArena.chunkSize))
            _ = packed(PayloadArena.chunkSize / 50, size: 50, into: &arena)
        }
        #expect(payload == [UInt8](repeating: 0, count: 50))
    }

    @Test func decode_readsJSONInPlace_andNamesTheTopicWhenItIsNot() throws {
        struct Value: Decodable, Equatable { let n: Int }
        var arena = PayloadArena()
        _ = packed(3, size: 20, into: &arena)
        let bytes = Array("{\"n\":42}".utf8)
        let payload = bytes.withUnsafeBytes { arena.copy($0) }
        let meta = EventMeta(seq: 1, timestampMicros: 0, source: "s", instance: "i")
        #expect(try BusEvent(topic: "a.b", meta: meta, payload: payload).decode(Value.self) == Value(n: 42))
        #expect(throws: BusError.self) { try BusEvent(topic: "a.b", meta: meta, payload: [1, 2]).decode(Value.self) }
        #expect(throws: BusError.self) { try BusEvent(topic: "a.b", meta: meta, payload: EventPayload()).decode(Value.self) }
    }

    /// The subscriber's real intake, reading a real socket: an event kept after later batches
    /// were received (and libzmq's buffers and the shared payload buffer reused) still has the
    /// bytes it arrived with.
    @Test func keptEvent_afterLaterBatches_stillHasItsBytes() async throws {
        let context = ZMQContext(ioThreads: 0)
        let endpoint = "inproc://payload-\(UInt64.random(in: 0...UInt64.max))"
        let push = try ZMQSocket(context, .push)
        try push.bind(endpoint)
        let pull = try ZMQSocket(context, .pull)
        try pull.connect(endpoint)
        let parts = ZMQParts(capacity: 4)
        defer {
            parts.close()
            push.close()
            pull.close()
            context.terminate()
        }
        let channel = EventChannel()
        var intake = SubscriberHandler.Intake()
        intake.locals.append(SubscriberHandler.Local(id: 1, patterns: [try TopicPattern(">")], channel: channel))
        let logger = Logger(label: "test", level: .error)
        func send(_ seq: UInt64, _ payload: [UInt8]) throws {
            let meta = EventMeta(seq: seq, timestampMicros: 0, source: "s", instance: "i").encode()
            #expect(try push.send([Array("a.b".utf8), meta, payload]))
        }
        func take() async -> [BusEvent] { await channel.nextEvents() ?? [] }

        let first = Array("first event".utf8)
        try send(1, first)
        intake.read(pull, into: parts, budget: 100, logger: logger)
        let kept = try #require(await take().first)
        #expect(kept.payload == first)

        // Enough later events to fill several shared buffers.
        let size = 200
        let later = 2 * PayloadArena.chunkSize / size + 1
        var received = 0
        for seq in 2...UInt64(later + 1) {
            try send(seq, [UInt8](repeating: UInt8(truncatingIfNeeded: seq), count: size))
            if seq % 50 == 0 || seq == UInt64(later + 1) {
                intake.read(pull, into: parts, budget: 100, logger: logger)
                for event in await take() {
                    #expect(event.payload == [UInt8](repeating: UInt8(truncatingIfNeeded: event.meta.seq), count: size))
                    received += 1
                }
            }
        }
        #expect(received == later)
        #expect(kept.payload == first)
        #expect(kept.payload.extracting(0..<5) == Array("first".utf8))
    }
}
