import Testing

@testable import Bus
@testable import BusWire

/// Gap detection per topic and publisher instance: what makes a lost event visible.
struct GapTrackerTests {
    func event(_ topic: String, _ instance: String, _ seq: UInt64, _ flags: EventMeta.Flags = []) -> BusEvent {
        BusEvent(topic: topic, meta: EventMeta(flags: flags, seq: seq, timestampMicros: 0, source: "s", instance: instance), payload: [])
    }

    @Test func consecutive_haveNoGap_andAGapCountsTheMissing() {
        var gaps = GapTracker()
        #expect(gaps.record(event("a.b", "i1", 5)) == 0)  // first seen: no gap
        #expect(gaps.record(event("a.b", "i1", 6)) == 0)
        #expect(gaps.record(event("a.b", "i1", 9)) == 2)
        #expect(gaps.record(event("a.b", "i1", 10)) == 0)
    }

    @Test func interleavedTopicsAndInstances_areTrackedSeparately() {
        var gaps = GapTracker()
        #expect(gaps.record(event("a.b", "i1", 1)) == 0)
        #expect(gaps.record(event("a.c", "i1", 1)) == 0)
        #expect(gaps.record(event("a.b", "i2", 7)) == 0)
        #expect(gaps.record(event("a.b", "i1", 2)) == 0)
        #expect(gaps.record(event("a.c", "i1", 4)) == 2)
        #expect(gaps.record(event("a.b", "i2", 8)) == 0)
        #expect(gaps.record(event("a.b", "i1", 5)) == 2)
        #expect(gaps.record(event("a.b", "i2", 10)) == 1)
    }

    @Test func duplicatesAndOlder_areNoGap_andDoNotMoveBack() {
        var gaps = GapTracker()
        #expect(gaps.record(event("t", "i", 10)) == 0)
        #expect(gaps.record(event("t", "i", 10)) == 0)
        #expect(gaps.record(event("t", "i", 3)) == 0)
        #expect(gaps.record(event("t", "i", 11)) == 0)
        #expect(gaps.record(event("u", "i", 1)) == 0)
        #expect(gaps.record(event("t", "i", 4)) == 0)  // older, after a switch of topic
        #expect(gaps.record(event("t", "i", 13)) == 1)
    }

    @Test func snapshotsAndReplays_neverCountAsGaps_butMoveTheSequence() {
        var gaps = GapTracker()
        #expect(gaps.record(event("t", "i", 1)) == 0)
        #expect(gaps.record(event("t", "i", 5, .snapshot)) == 0)
        #expect(gaps.record(event("t", "i", 6)) == 0)
        #expect(gaps.record(event("t", "i", 9, .replayed)) == 0)
        #expect(gaps.record(event("t", "i", 11)) == 1)
    }

    /// The kernel's repeat of a stream's newest event: a gap and delivered when it is news, not
    /// delivered at all (nil) when the subscription already has it.
    @Test func repeats_areAGapWhenNew_andNotDeliveredWhenSeen() {
        var gaps = GapTracker()
        #expect(gaps.record(event("t", "i", 1)) == 0)
        #expect(gaps.record(event("t", "i", 2)) == 0)
        #expect(gaps.record(event("t", "i", 2, .repeated)) == nil)
        #expect(gaps.record(event("t", "i", 1, .repeated)) == nil)
        #expect(gaps.record(event("t", "i", 7, .repeated)) == 4)
        #expect(gaps.record(event("t", "i", 7, .repeated)) == nil)
        #expect(gaps.record(event("t", "i", 8)) == 0)
        // A stream never seen: its newest event is all there is to have.
        #expect(gaps.record(event("u", "i", 40, .repeated)) == 0)
        #expect(gaps.record(event("u", "i", 40, .repeated)) == nil)
    }

    @Test func duplicatesAndOlder_ofAStream_orOfARetainedTopicFromAnyInstance_areOutOfSequence() {
        var gaps = GapTracker()
        func outOfSequence(_ event: BusEvent) -> Bool {
            _ = gaps.record(event)
            return gaps.outOfSequence
        }
        #expect(!outOfSequence(event("a.b", "i1", 1)))
        #expect(!outOfSequence(event("a.b", "i1", 2)))
        #expect(outOfSequence(event("a.b", "i1", 2)))
        #expect(outOfSequence(event("a.b", "i1", 1)))
        #expect(!outOfSequence(event("a.b", "i1", 3)))
        // A retained topic has one sequence whatever the instance; its current value counts.
        #expect(!outOfSequence(event("s.state", "i1", 7, [.retained, .snapshot])))
        #expect(outOfSequence(event("s.state", "i2", 7, .retained)))
        #expect(!outOfSequence(event("s.state", "i2", 8, .retained)))
        #expect(!outOfSequence(event("s.state", "i3", 5, [.retained, .snapshot])))
        #expect(!outOfSequence(event("s.state", "i3", 2, [.retained, .reset])))
        #expect(!outOfSequence(event("s.state", "i3", 3, .retained)))
    }
}
