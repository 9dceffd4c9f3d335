import Bus
import BusTestSupport
import Foundation
import Testing

/// What `busctl monitor` makes of sequence numbers that repeat or go back, and of a stream
/// whose last events it never showed.
@Suite(.serialized)
struct SequenceTests {
    /// Publishes `count` events with pyzmq (`bus_pub.py`) as identity `dup`, to its end.
    func publish(_ h: Harness, _ topic: String, instance: String, from seq: Int, count: Int, retain: Bool, payload: String = "{}") async throws {
        var args = ["--topic", topic, "--source", "dup", "--instance", instance, "--seq-start", String(seq), "--count", String(count)]
        args += ["--payload", payload]
        if retain { args.append("--retain") }
        let publisher = try await h.interop("bus_pub.py", args, identity: "dup")
        #expect(await publisher.waitForExit(timeout: .seconds(30)) == 0, "bus_pub.py: \(publisher.stderr)")
    }

    @Test func repeatedOrBackwardSequenceNumbers_areFlagged_neverShownAsNormal() async throws {
        try await Harness.with { h in
            try await publish(h, "dup.state", instance: "a", from: 1, count: 3, retain: true)
            let monitor = try h.spawn(Binaries.busctl, ["monitor", "dup.>", "--json", "--timeout", "6"], name: "monitor")
            #expect(await eventually { h.jsonLines(monitor).contains { $0["seq"] as? Int == 3 } })
            // A second publisher of the same state topic numbers 2, 3, 4: two repeat the topic's sequence.
            try await publish(h, "dup.state", instance: "b", from: 2, count: 3, retain: true)
            // A plain stream restarted under the same instance goes back.
            try await publish(h, "dup.tick", instance: "c", from: 1, count: 3, retain: false)
            try await publish(h, "dup.tick", instance: "c", from: 2, count: 2, retain: false)
            #expect(await monitor.waitForExit(timeout: .seconds(15)) != nil)
            let events = h.jsonLines(monitor).filter { $0["snapshot"] == nil && $0["topic"] != nil && $0["seq"] != nil }
            func flagged(_ topic: String, _ instance: String) -> [Int: Bool] {
                var result: [Int: Bool] = [:]
                for event in events where event["topic"] as? String == topic && event["instance"] as? String == instance {
                    result[event["seq"] as? Int ?? -1, default: false] =
                        result[event["seq"] as? Int ?? -1, default: false] || (event["out_of_sequence"] as? Bool ?? false)
                }
                return result
            }
            #expect(flagged("dup.state", "b") == [2: true, 3: true, 4: false], "monitor:\n\(monitor.stdout)")
            #expect(flagged("dup.tick", "c") == [1: false, 2: true, 3: true], "monitor:\n\(monitor.stdout)")
        }
    }

    @Test func monitorThatLostAStreamsEnd_saysSoWhenItStops() async throws {
        // A small queue, no hold and no catch-up repeats: a stopped monitor loses the burst's end.
        let arguments = ["--subscriber-hwm", "100", "--subscriber-grace-ms", "0", "--catch-up-ms", "0"]
        try await Harness.with(kernelArguments: arguments) { h in
            try await publish(h, "dup.burst", instance: "a", from: 1, count: 1, retain: true)
            let monitor = try h.spawn(Binaries.busctl, ["monitor", "dup.burst", "--json", "--timeout", "10"], name: "monitor")
            #expect(await eventually { h.jsonLines(monitor).contains { $0["seq"] as? Int == 1 } })
            monitor.signal(SIGSTOP)
            let pad = String(repeating: "x", count: 16 << 10)
            try await publish(h, "dup.burst", instance: "a", from: 2, count: 2000, retain: true, payload: "{\"pad\":\"\(pad)\"}")
            monitor.signal(SIGCONT)
            let status = await monitor.waitForExit(timeout: .seconds(20))
            let shown = h.jsonLines(monitor).compactMap { $0["seq"] as? Int }.max() ?? 0
            let tail = h.jsonLines(monitor).first { $0["tail_not_seen"] != nil }
            #expect(shown < 2001, "the monitor saw the whole burst; nothing was lost")
            #expect(status == 6, "monitor exit status; stderr:\n\(monitor.stderr)")
            #expect(tail?["current_seq"] as? Int == 2001)
            #expect(tail?["last_seq"] as? Int == shown)
        }
    }
}
