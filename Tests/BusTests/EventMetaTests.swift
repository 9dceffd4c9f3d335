import Testing

@testable import Bus
@testable import BusWire

struct EventMetaTests {
    let sample = EventMeta(
        flags: [.retained], seq: 0x0102_0304_0506_0708, timestampMicros: 1_700_000_000_000_000, source: "auth",
        instance: "auth-1", contentType: "application/json", correlationID: "c1", causationID: "")

    @Test func roundTrip_keepsEveryField() throws {
        #expect(try EventMeta.decode(sample.encode()) == sample)
    }

    /// The publisher's path: string fields encoded once, headers written into one reused
    /// buffer. A shorter header after a longer one must not keep the longer one's bytes.
    @Test func reusedBuffer_writesTheSameBytesAsEncode() throws {
        var other = sample
        other.instance = "i"
        other.correlationID = ""
        var buffer: [UInt8] = []
        for meta in [sample, other, sample] {
            let tail = EventMeta.encodeTail(
                source: meta.source, instance: meta.instance, contentType: meta.contentType, correlationID: meta.correlationID,
                causationID: meta.causationID)
            EventMeta.write(flags: meta.flags, seq: meta.seq, timestampMicros: meta.timestampMicros, tail: tail, to: &buffer)
            #expect(buffer == meta.encode())
            #expect(try EventMeta.decode(buffer) == meta)
        }
    }

    @Test func cachedDecode_reusesStringsOnlyWhenTheyAreTheSame() throws {
        var cache = EventMeta.DecodeCache()
        // A bare fixed header (no strings) is malformed, with or without a cache.
        #expect(throws: BusError.self) { try EventMeta.decode(Array(sample.encode().prefix(EventMeta.fixedSize)), cache: &cache) }
        #expect(try EventMeta.decode(sample.encode(), cache: &cache) == sample)
        var next = sample
        next.seq += 1
        next.flags = []
        #expect(try EventMeta.decode(next.encode(), cache: &cache) == next)
        var other = next
        other.instance = "auth-2"
        #expect(try EventMeta.decode(other.encode(), cache: &cache) == other)
        #expect(try EventMeta.decode(next.encode(), cache: &cache) == next)
    }

    @Test func stringFields_areSharedByDecodedEvents_andCopiedOnWrite() throws {
        var cache = EventMeta.DecodeCache()
        let first = try EventMeta.decode(sample.encode(), cache: &cache)
        var next = sample
        next.seq += 1
        let second = try EventMeta.decode(next.encode(), cache: &cache)
        #expect(first.text === second.text)
        var changed = second
        changed.causationID = "c-9"
        #expect(changed.text !== second.text)
        #expect(second.causationID == sample.causationID)
        #expect(changed.causationID == "c-9" && changed.source == sample.source && changed.instance == sample.instance)
        #expect(changed != second)
        // Equal strings in different boxes are equal.
        #expect(try EventMeta.decode(sample.encode()) == first)
    }

    @Test func encode_isBigEndianWithFixedHeader() {
        let bytes = sample.encode()
        #expect(bytes[0] == 1)
        #expect(bytes[1] == 1)
        #expect(Array(bytes[2..<10]) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(bytes[18] == 4)
        #expect(Array(bytes[19..<23]) == Array("auth".utf8))
    }

    @Test func decode_whenTruncated_throwsMalformed() {
        let bytes = sample.encode()
        for cut in [0, 5, 17, 20, bytes.count - 1] {
            #expect(throws: BusError.self) { try EventMeta.decode(Array(bytes.prefix(cut))) }
        }
    }

    @Test func decode_whenWrongVersion_throwsMalformed() {
        var bytes = sample.encode()
        bytes[0] = 9
        #expect {
            try EventMeta.decode(bytes)
        } throws: { error in
            (error as? BusError).map { "\($0)".contains("version 9") } ?? false
        }
    }

    @Test func decode_ignoresTrailingBytes_forForwardCompatibility() throws {
        #expect(try EventMeta.decode(sample.encode() + [1, 2, 3]) == sample)
    }

    @Test func busEvent_decodesFramesAndPayload() throws {
        let event = try BusEvent.decode([Array("auth.state".utf8), sample.encode(), Array(#"{"user":"ann"}"#.utf8)])
        struct State: Decodable { var user: String }
        #expect(event.topic == "auth.state")
        #expect(try event.decode(State.self).user == "ann")
        #expect(throws: BusError.self) { try event.decode(Int.self) }
        #expect(throws: BusError.self) { try BusEvent.decode([Array("a".utf8), sample.encode()]) }
    }
}
