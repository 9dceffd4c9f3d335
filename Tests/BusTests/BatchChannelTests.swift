import Testing

@testable import Bus

/// What a full hand-off buffer drops, and where the loss is reported.
struct BatchChannelTests {
    @Test func holdingChannel_dropsTheNewest_andCountsThem() async throws {
        let channel = BatchChannel<Int>(capacity: 4, holdsProducer: true)
        channel.push([1, 2, 3])
        channel.push([4, 5, 6])
        channel.push(7)
        let taken = try #require(await channel.take())
        #expect(taken.batch == [1, 2, 3, 4])
        #expect(taken.dropped == 3)
    }

    /// `observe` relies on this: the last value pushed is always delivered, so a stream that
    /// ends during a loss still ends on its latest value (a dropped tail has no later event to
    /// reveal it).
    @Test func nonHoldingChannel_keepsTheNewest_andCountsTheOldestDropped() async throws {
        let channel = BatchChannel<Int>(capacity: 4, holdsProducer: false)
        channel.push([1, 2, 3])
        channel.push([4, 5, 6])
        #expect(try #require(await channel.take()) == ([3, 4, 5, 6], 2))
        for value in 7...12 { channel.push(value) }
        #expect(try #require(await channel.take()) == ([9, 10, 11, 12], 2))
        channel.push(Array(13...22))
        #expect(try #require(await channel.take()) == ([19, 20, 21, 22], 6))
        channel.push([23])
        #expect(try #require(await channel.take()) == ([23], 0))
    }

    @Test func droppedCount_landsOnTheFirstEventAfterTheLoss() async throws {
        let channel = EventChannel(capacity: 2, holdsProducer: false)
        let events = (1...5).map { seq in
            BusEvent(topic: "a.b", meta: EventMeta(seq: UInt64(seq), timestampMicros: 0, source: "s", instance: "i"), payload: [])
        }
        channel.push(events)
        let batch = try #require(await channel.nextEvents())
        #expect(batch.map(\.meta.seq) == [4, 5])
        #expect(batch.map(\.missed) == [3, 0])
    }
}
