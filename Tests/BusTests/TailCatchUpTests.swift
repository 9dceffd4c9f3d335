import Testing

@testable import Bus
@testable import BusKernel
@testable import BusSupport
@testable import BusWire

/// The kernel's catch-up after a drop: which events it keeps, when it re-sends them, and its
/// limits (the socket side is covered by EventPlaneTests).
struct TailCatchUpTests {
    func meta(_ seq: UInt64, instance: String = "p-1", flags: EventMeta.Flags = []) -> [UInt8] {
        EventMeta(flags: flags, seq: seq, timestampMicros: 0, source: "p", instance: instance).encode()
    }

    func record(_ catchUp: inout TailCatchUp, _ topic: String, _ meta: [UInt8], payload: [UInt8] = [1, 2, 3]) {
        meta.withUnsafeBytes { m in payload.withUnsafeBytes { p in catchUp.record(topic: Array(topic.utf8), meta: m, payload: p) } }
    }

    /// What a round sends: (topic, seq, flags) in topic-then-instance order.
    func round(_ catchUp: inout TailCatchUp, at now: MonotonicTime, refuseAfter: Int = .max) -> [(String, UInt64, EventMeta.Flags)] {
        var sent: [(String, UInt64, EventMeta.Flags)] = []
        catchUp.sendRound(now: now) { tail, meta in
            guard sent.count < refuseAfter else { return false }
            let decoded = try! EventMeta.decode(meta)
            sent.append((String(decoding: tail.topic, as: UTF8.self) + "/" + decoded.instance, decoded.seq, decoded.flags))
            return true
        }
        return sent.sorted { $0.0 < $1.0 }
    }

    func due(_ catchUp: inout TailCatchUp, _ now: MonotonicTime) -> Bool {
        catchUp.roundDue(now: now)
    }

    @Test func beforeADrop_nothingIsKept() {
        var catchUp = TailCatchUp(limits: .init())
        record(&catchUp, "a.b", meta(1))
        #expect(!catchUp.isRecording)
        #expect(catchUp.tails.isEmpty)
        #expect(catchUp.nextDue() == nil)
        #expect(!due(&catchUp, .now))
    }

    @Test func afterADrop_theNewestEventOfEachStream_isRepeatedWithItsOwnSeq() {
        var catchUp = TailCatchUp(limits: .init())
        let start = MonotonicTime.now
        catchUp.dropped(now: start)
        record(&catchUp, "a.b", meta(1))
        record(&catchUp, "a.b", meta(2))
        record(&catchUp, "a.b", meta(1, instance: "q-1"))
        record(&catchUp, "a.c", meta(9))
        record(&catchUp, "a.b", meta(3), payload: [7])
        #expect(catchUp.tails.count == 3)
        #expect(due(&catchUp, start))
        let sent = round(&catchUp, at: start)
        #expect(sent.map(\.0) == ["a.b/p-1", "a.b/q-1", "a.c/p-1"])
        #expect(sent.map(\.1) == [3, 1, 9])
        #expect(sent.allSatisfy { $0.2 == .repeated })
        #expect(catchUp.tails[Array("a.b".utf8) + [0] + Array("p-1".utf8)]?.payload == [7])
        #expect(catchUp.sent == 3)
        // The kept meta is the event's own: only the sent copy is flagged.
        #expect(catchUp.tails.values.allSatisfy { (try? EventMeta.decode($0.meta))?.flags == [] })
    }

    @Test func rounds_backOffToTheFallback_andComeSoonerWhenTheDescriptorFired() {
        let limits = TailCatchUp.Limits(window: .seconds(30), interval: .milliseconds(250), fallback: .seconds(1))
        var catchUp = TailCatchUp(limits: limits)
        let start = MonotonicTime.now
        catchUp.dropped(now: start)
        record(&catchUp, "a.b", meta(1))
        #expect(due(&catchUp, start))
        _ = round(&catchUp, at: start)
        // Pauses of 250 ms, 500 ms, then the fallback of 1 s.
        var at = start
        for pause in [250, 500, 1000, 1000] {
            #expect(!due(&catchUp, at + .milliseconds(pause - 1)))
            at = at + .milliseconds(pause)
            #expect(catchUp.nextDue() == at)
            #expect(due(&catchUp, at))
            _ = round(&catchUp, at: at)
        }
        catchUp.descriptorFired()
        #expect(!due(&catchUp, at + .milliseconds(249)))
        #expect(due(&catchUp, at + .milliseconds(250)))
        // A full queue ends a round early: it is retried at the interval.
        at = at + .milliseconds(300)
        #expect(round(&catchUp, at: at, refuseAfter: 0).isEmpty)
        #expect(due(&catchUp, at + .milliseconds(250)))
        // A new drop starts the pauses again from the interval.
        _ = round(&catchUp, at: at + .milliseconds(250))
        catchUp.dropped(now: at + .milliseconds(300))
        #expect(due(&catchUp, at + .milliseconds(500)))
    }

    @Test func theWindow_endsAfterTheLastDrop_andForgetsEverything() {
        var catchUp = TailCatchUp(limits: .init(window: .seconds(30)))
        let start = MonotonicTime.now
        catchUp.dropped(now: start)
        record(&catchUp, "a.b", meta(1))
        catchUp.dropped(now: start + .seconds(20))
        #expect(due(&catchUp, start + .seconds(49)))
        #expect(!due(&catchUp, start + .seconds(50)))
        #expect(!catchUp.isRecording)
        #expect(catchUp.tails.isEmpty && catchUp.bytes == 0)
        record(&catchUp, "a.b", meta(2))
        #expect(catchUp.tails.isEmpty)
    }

    @Test func aZeroWindow_neverRecords() {
        var catchUp = TailCatchUp(limits: .init(window: .zero))
        catchUp.dropped(now: .now)
        record(&catchUp, "a.b", meta(1))
        #expect(!catchUp.isRecording && catchUp.tails.isEmpty)
    }

    @Test func limits_countWhatIsNotKept_andAStreamThatOutgrowsThemIsForgotten() {
        var catchUp = TailCatchUp(limits: .init(maxStreams: 2, maxBytes: 1000))
        catchUp.dropped(now: .now)
        record(&catchUp, "a.b", meta(1))
        record(&catchUp, "a.c", meta(1))
        record(&catchUp, "a.d", meta(1))
        #expect(catchUp.tails.count == 2)
        #expect(catchUp.overflow == 1)
        // Its newer event does not fit: keeping the older one would repeat a stale value.
        record(&catchUp, "a.b", meta(2), payload: [UInt8](repeating: 0, count: 1000))
        #expect(catchUp.tails.count == 1)
        #expect(catchUp.overflow == 2)
        let kept = catchUp.tails.values.reduce(0) { $0 + $1.size }
        #expect(catchUp.bytes == kept)
        // The same through the dictionary (another stream recorded in between), then the
        // forgotten stream comes back small: kept anew, and the byte count stays exact.
        record(&catchUp, "a.c", meta(2))
        record(&catchUp, "a.e", meta(1))
        record(&catchUp, "a.c", meta(3), payload: [UInt8](repeating: 0, count: 1000))
        record(&catchUp, "a.c", meta(4))
        #expect(catchUp.tails.count == 2)
        #expect(catchUp.bytes == catchUp.tails.values.reduce(0) { $0 + $1.size })
    }

    @Test func aMetaWithoutAnInstance_isNotKept() {
        var catchUp = TailCatchUp(limits: .init())
        catchUp.dropped(now: .now)
        record(&catchUp, "a.b", Array(meta(1).prefix(EventMeta.fixedSize + 2)))
        #expect(catchUp.tails.isEmpty)
    }
}
