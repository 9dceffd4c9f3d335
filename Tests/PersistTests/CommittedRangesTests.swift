import Testing

@testable import PersistCore

struct CommittedRangesTests {
    @Test func from_mergesConsecutiveSeqsPerTopicAndInstance() {
        let events = [
            event("b.state", seq: 2, value: 0), event("a.state", seq: 3, value: 0), event("a.state", seq: 1, value: 0),
            event("a.state", seq: 2, value: 0), event("a.state", seq: 7, value: 0), event("a.state", seq: 4, value: 0, instance: "svc-2"),
        ]
        let ranges = CommittedRanges.from(events)
        #expect(
            ranges == [
                CommittedRanges(topic: "a.state", instance: "svc-1", ranges: [1...3, 7...7]),
                CommittedRanges(topic: "a.state", instance: "svc-2", ranges: [4...4]),
                CommittedRanges(topic: "b.state", instance: "svc-1", ranges: [2...2]),
            ])
    }
}
