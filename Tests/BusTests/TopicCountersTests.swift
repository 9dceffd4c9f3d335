import Testing

@testable import Bus
@testable import BusKernel

/// The kernel's per-topic counters: made when a topic is first seen, the least recently seen
/// tenth forgotten when there are too many.
struct TopicCountersTests {
    @Test func counters_areMadeOnce_andChangedInPlace() {
        var plane = EventPlane(maxRetained: 10)
        let key = Array("a.b".utf8)
        plane.counters(for: key).messages += 2
        plane.counters(for: key).messages += 1
        #expect(plane.topics[key]?.messages == 3)
        #expect(plane.topics.count == 1)
    }

    @Test func atTheLimit_theLeastRecentlySeenTenthIsForgotten() {
        var plane = EventPlane(maxRetained: 10)
        for i in 0..<EventPlane.maxTopics {
            plane.counters(for: Array("t.\(i)".utf8)).lastSeenMs = Int64(i)
        }
        // Seen most recently of all: survives although it was made first.
        plane.topics[Array("t.0".utf8)]?.lastSeenMs = Int64(EventPlane.maxTopics)
        _ = plane.counters(for: Array("new.topic".utf8))
        #expect(plane.topics.count == EventPlane.maxTopics - EventPlane.maxTopics / 10 + 1)
        #expect(plane.topics[Array("t.0".utf8)] != nil)
        #expect(plane.topics[Array("t.1".utf8)] == nil)
        #expect(plane.topics[Array("t.\(EventPlane.maxTopics / 10)".utf8)] == nil)
        #expect(plane.topics[Array("t.\(EventPlane.maxTopics / 10 + 1)".utf8)] != nil)
        #expect(plane.topics[Array("new.topic".utf8)] != nil)
    }
}
