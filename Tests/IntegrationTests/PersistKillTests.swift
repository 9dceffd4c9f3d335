import Bus
import BusTestSupport
import Foundation
import Testing

/// Publishes retained `Counter` values on a few topics, round robin and paced, from one client;
/// remembers the last seq and value of each topic. Can pause between publishes.
final class StateStreamer: Sendable {
    struct Published: Sendable, Equatable {
        var seq: UInt64
        var value: Int
    }

    struct State {
        var published = 0
        var last: [String: Published] = [:]
        var paused = false
        var idle = false
        var stopped = false
        var error: String?
    }

    let topics: [String]
    let client: BusClient
    private let state = Locked(State())
    private let task = Locked<Task<Void, Never>?>(nil)

    init(client: BusClient, topics: [String]) {
        self.client = client
        self.topics = topics
    }

    func start() {
        let state = self.state
        let client = self.client
        let topics = self.topics
        task.withLock {
            $0 = Task {
                var next = 0
                while true {
                    let (stop, pause) = state.withLock { s -> (Bool, Bool) in
                        s.idle = s.paused || s.stopped
                        return (s.stopped, s.paused)
                    }
                    if stop { return }
                    if pause {
                        try? await Task.sleep(for: .milliseconds(5))
                        continue
                    }
                    let topic = topics[next % topics.count]
                    let value = next
                    next += 1
                    do {
                        try await client.publish(topic, Counter(value: value), retain: true)
                    } catch {
                        state.withLock { $0.error = "\(error)" }
                        return
                    }
                    state.withLock { s in
                        // One client, one instance: each topic's first retained publish continues
                        // the kernel's seq (none: 0), then +1 per publish.
                        let seq = (s.last[topic]?.seq ?? 0) + 1
                        s.last[topic] = Published(seq: seq, value: value)
                        s.published += 1
                    }
                    // Pacing, not synchronization: a steady stream of a few hundred events/s.
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
        }
    }

    var published: Int { state.withLock { $0.published } }
    var last: [String: Published] { state.withLock { $0.last } }
    var error: String? { state.withLock { $0.error } }

    /// Returns once no publish is in flight.
    func pause() async {
        state.withLock {
            $0.paused = true
            $0.idle = false
        }
        _ = await eventually { self.state.withLock { $0.idle } }
    }

    func resume() { state.withLock { $0.paused = false } }

    func stop() async {
        state.withLock { $0.stopped = true }
        await task.withLock { $0 }?.value
    }
}

@Suite(.serialized)
struct PersistKillTests {
    @Test func sigkillWhileStreaming_acknowledgedEventsSurvive_latestStateAndDowntimeValuesAreBack() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in try await killAndRestart(h, state: state) }
    }

    func killAndRestart(_ h: Harness, state: StateDirectory) async throws {
        var persist = try await h.startPersist(stateDirectory: state.path)
        let publisher = h.client(name: "kill")
        let ackSubscription = try h.client(name: "acks").subscribe("persist.committed")
        let acks = AckLog(ackSubscription, instance: publisher.instance)
        try await ackSubscription.confirm()
        let topics = ["kill.a.state", "kill.b.state", "kill.c.state"]
        let stream = StateStreamer(client: publisher, topics: topics)
        stream.start()
        for round in 1...3 {
            // Kill at a random moment: after a random number of further acknowledgements.
            let target = acks.count + Int.random(in: 20...150)
            let progressed = await eventually(timeout: .seconds(20)) { acks.count >= target }
            #expect(progressed, "round \(round): acknowledgements stalled at \(acks.count)")
            persist.signal(SIGKILL)
            let exited = await persist.waitForExit(timeout: .seconds(10))
            // Process.terminationReason traps while the process runs: stop here instead.
            try #require(exited != nil, "persist not reaped 10 s after SIGKILL: \(persist.kernelState)")
            #expect(persist.terminationReason == .uncaughtSignal)

            // Events keep streaming while persist is down.
            let before = stream.published
            let streamed = await eventually { stream.published >= before + 30 }
            #expect(streamed)
            await stream.pause()
            let downtime = stream.last
            persist = try await h.startPersist(stateDirectory: state.path)
            // The value each topic had while persist was down is stored once it is back.
            for topic in topics {
                let expected = try #require(downtime[topic])
                let stored = await isStored(h, topic: topic, expected)
                #expect(stored, "round \(round): \(topic) seq \(expected.seq), published while persist was down, is not stored")
            }
            stream.resume()
        }
        await stream.stop()
        #expect(stream.error == nil)

        let last = stream.last
        for topic in topics {
            let expected = try #require(last[topic])
            // The latest snapshot equals the last value published.
            let current = await snapshotEquals(h, topic: topic, expected)
            #expect(current, "\(topic): the snapshot is not seq \(expected.seq) value \(expected.value)")
            let retainedSeq = try await publisher.retained(topic)?.meta.seq
            #expect(retainedSeq == expected.seq)
            // Every acknowledged event is stored.
            let stored = try await storedSeqs(h, topic: topic, instance: publisher.instance)
            let acknowledged = acks.seqs(topic)
            #expect(!acknowledged.isEmpty)
            let lost = acknowledged.subtracting(stored)
            #expect(lost.isEmpty, "\(topic): \(lost.count) acknowledged event(s) missing after SIGKILL, e.g. \(lost.sorted().prefix(5))")
        }
        acks.stop()
    }

    func isStored(_ h: Harness, topic: String, _ expected: StateStreamer.Published) async -> Bool {
        await eventually {
            let events = (try? await h.persistHistory(topic, ["from_seq": expected.seq, "to_seq": expected.seq])) ?? []
            return events.contains { storedCounter($0)?.value == expected.value }
        }
    }

    func snapshotEquals(_ h: Harness, topic: String, _ expected: StateStreamer.Published) async -> Bool {
        await eventually {
            guard let snapshot = storedCounter(try? await h.persistRestore(topic)) else { return false }
            return snapshot.seq == expected.seq && snapshot.value == expected.value
        }
    }

    func storedSeqs(_ h: Harness, topic: String, instance: String) async throws -> Set<UInt64> {
        Set(
            try await h.persistHistory(topic).compactMap { event -> UInt64? in
                guard event["instance"] as? String == instance else { return nil }
                return (event["seq"] as? NSNumber)?.uint64Value
            })
    }
}
