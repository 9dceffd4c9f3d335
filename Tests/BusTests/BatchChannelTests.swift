import Testing

@testable import Bus
@testable import BusWire

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

    /// A dropped event also takes with it the gap it carried (events the kernel or the network
    /// lost before it): the count the consumer sees covers both.
    @Test func droppedEvents_countTheGapsTheyCarried() async throws {
        func event(_ seq: UInt64, missed: UInt64 = 0) -> BusEvent {
            BusEvent(
                topic: "a.b", meta: EventMeta(seq: seq, timestampMicros: 0, source: "s", instance: "i"), payload: [], missed: missed)
        }
        let keepsNewest = EventChannel(capacity: 2, holdsProducer: false, loss: { 1 + $0.missed })
        keepsNewest.push([event(1), event(5, missed: 3), event(6)])
        keepsNewest.push(event(7))
        let newest = try #require(await keepsNewest.nextEvents())
        #expect(newest.map(\.meta.seq) == [6, 7])
        #expect(newest.map(\.missed) == [5, 0])  // 1, 2-4 (carried by 5), 5

        let holds = EventChannel(capacity: 2, holdsProducer: true, loss: { 1 + $0.missed })
        holds.push([event(1), event(2), event(5, missed: 2)])
        holds.push(event(6))
        let held = try #require(await holds.nextEvents())
        #expect(held.map(\.meta.seq) == [1, 2])
        // Reported with the batch it could not join: 3-4 (carried by 5), 5 and 6.
        #expect(held.first?.missed == 4)
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
