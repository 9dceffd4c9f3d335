import Bus
import BusTestSupport
import Foundation
import Testing

/// Skipped sequence numbers on a retained topic: persist counts the gap and fetches the
/// kernel's retained value.
@Suite(.serialized)
struct PersistGapTests {
    @Test func skippedSequenceNumbers_areCountedAsAGap_andTheRetainedValueIsFetched() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            try await h.startPersist(stateDirectory: state.path)
            let publisher = h.client(name: "gappy")
            // Raw events with chosen sequence numbers: 1, 2, then 5 (3 and 4 never arrive).
            for seq in [UInt64(1), 2, 5] {
                let meta = EventMeta(
                    flags: .retained, seq: seq, timestampMicros: UInt64(Date().timeIntervalSince1970 * 1_000_000),
                    source: "gappy", instance: publisher.instance)
                try publisher.send(event: [Array("gappy.state".utf8), meta.encode(), Array("{\"value\":\(seq)}".utf8)])
            }
            let counted = await eventually {
                let stats = try? await h.persist("stats")
                let gaps = stats?["gaps"] as? [String: Any]
                return (gaps?["detected"] as? NSNumber)?.intValue == 1 && (gaps?["missed_events"] as? NSNumber)?.intValue == 2
                    && (gaps?["healed"] as? NSNumber)?.intValue ?? 0 >= 1
            }
            #expect(counted)
            // Counted and queued; committed a moment later.
            let committed = await eventually { storedCounter(try? await h.persistRestore("gappy.state"))?.seq == 5 }
            #expect(committed)
            #expect(try await h.persistHistory("gappy.state").compactMap { storedCounter($0)?.seq } == [1, 2, 5])
        }
    }
}
