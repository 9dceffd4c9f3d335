import Bus
import BusTestSupport
import Foundation
import Testing

/// The database cannot grow (here a size cap, as a full disk): a clear error on the bus and
/// in the log, persist keeps running and answering, and writes resume once there is room.
@Suite(.serialized)
struct PersistDiskFullTests {
    @Test func databaseFull_errorOnTheBus_keepsServing_resumesWhenRetentionFreesSpace_latestStateKept() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            let watcher = try h.client(name: "watcher").subscribe(["persist.error", "persist.recovered"])
            let seen = Locked<[(topic: String, code: String?)]>([])
            let watch = Task {
                for await event in watcher {
                    let body = try? JSONSerialization.jsonObject(with: Data(event.payload)) as? [String: Any]
                    seen.withLock { $0.append((event.topic, body?["code"] as? String)) }
                }
            }
            defer { watch.cancel() }
            try await watcher.confirm()
            let persist = try await h.startPersist(
                stateDirectory: state.path, arguments: ["--max-db-mb", "1", "--retention", "*=-:5", "--compact-every", "0"])
            let publisher = h.client(name: "big")
            let blob = String(repeating: "b", count: 16_000)
            let count = 90
            for i in 1...count {
                try await publisher.publish("big.state", ["value": AnyCodable(i), "blob": AnyCodable(blob)], retain: true)
            }
            let failed = await eventually(timeout: .seconds(15)) { seen.withLock { $0.contains { $0.topic == "persist.error" } } }
            #expect(failed)
            #expect(seen.withLock { $0.first { $0.topic == "persist.error" }?.code } == "disk_full")
            // The log line is written before the event is published, but reaches this process
            // through a pipe read in the background: wait for it.
            let logged = await eventually(timeout: .seconds(5)) { persist.stderr.contains("error persist: cannot write to the database") }
            #expect(logged, "persist log:\n\(persist.stderr)")
            // Still running and answering while it cannot write.
            #expect(persist.isRunning)
            _ = try await h.persist("stats")
            // Retention (applied automatically when the database is full) frees pages: writes resume.
            let recovered = await eventually(timeout: .seconds(15)) { seen.withLock { $0.contains { $0.topic == "persist.recovered" } } }
            #expect(recovered, "persist log:\n\(persist.stderr)")
            let latest = await eventually { storedCounter(try? await h.persistRestore("big.state"))?.seq == UInt64(count) }
            #expect(latest)
            let stats = try await h.persist("stats")
            #expect((stats["write_errors"] as? NSNumber)?.intValue ?? 0 >= 1)
            #expect(stats["failing_since_us"] is NSNull)
            #expect((stats["compactions"] as? NSNumber)?.intValue ?? 0 >= 1)
        }
    }
}
