import Bus
import BusTestSupport
import Foundation
import Testing

/// A damaged database file: a clear error, nothing served from it, recovery by the documented
/// path (quarantine and refill from the kernel's retained values, or refuse).
@Suite(.serialized)
struct PersistCorruptionTests {
    static let topics = ["data.a.state", "data.b.state"]
    static let perTopic = 150

    /// Stores `perTopic` events per topic with recognisable payloads, then stops persist
    /// gracefully (the WAL is checkpointed into the main file).
    func populate(_ h: Harness, _ state: StateDirectory) async throws {
        let persist = try await h.startPersist(stateDirectory: state.path)
        let publisher = h.client(name: "data")
        let pad = String(repeating: "p", count: 120)
        for i in 1...Self.perTopic {
            for topic in Self.topics {
                try await publisher.publish(
                    topic, ["value": AnyCodable(i), "marker": AnyCodable(String(format: "M%06d", i)), "pad": AnyCodable(pad)], retain: true)
            }
        }
        for topic in Self.topics {
            let stored = await eventually { storedCounter(try? await h.persistRestore(topic))?.seq == UInt64(Self.perTopic) }
            #expect(stored)
        }
        await persist.stop()
        #expect(persist.exitStatus == 0)
        let walSize = (try? FileManager.default.attributesOfItem(atPath: state.database + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)
    }

    /// Starts persist expecting a quarantine: the error event, the log line, the file moved
    /// aside, and only the kernel's latest values served.
    func expectQuarantineAndRefill(_ h: Harness, _ state: StateDirectory) async throws {
        let errors = try h.client(name: "watcher").subscribe("persist.error")
        try await errors.confirm()
        let persist = try await h.startPersist(stateDirectory: state.path)
        var iterator = errors.makeAsyncIterator()
        let event = try #require(await iterator.next())
        let body = try #require(try JSONSerialization.jsonObject(with: Data(event.payload)) as? [String: Any])
        #expect(body["code"] as? String == "corrupt_database")
        #expect(persist.stderr.contains("error persist: the database failed its integrity check"))
        #expect(state.quarantined.count == 1)
        let stats = try await h.persist("stats")
        #expect(stats["quarantined"] is [String: Any])
        for topic in Self.topics {
            // Refilled from the kernel's retained value: the latest state is back...
            let latest = await eventually { storedCounter(try? await h.persistRestore(topic))?.seq == UInt64(Self.perTopic) }
            #expect(latest)
            // ...and nothing from the damaged file is served.
            let history = try await h.persistHistory(topic)
            #expect(history.count == 1)
            #expect(history.first?["origin"] as? String != "live")
        }
    }

    @Test func truncatedDatabase_refuseExitsWithClearError_defaultQuarantinesAndRefills() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            try await populate(h, state)
            let size = try FileManager.default.attributesOfItem(atPath: state.database)[.size] as! Int
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: state.database))
            try handle.truncate(atOffset: UInt64(size / 2))
            try handle.close()

            let refused = try await h.startPersist(stateDirectory: state.path, arguments: ["--on-corrupt", "refuse"], waitReady: false)
            #expect(await refused.waitForExit(timeout: .seconds(15)) == 1)
            #expect(refused.stderr.contains("refusing to start"))
            #expect(refused.stderr.contains("is corrupt"))
            #expect(state.quarantined.isEmpty)
            #expect((try FileManager.default.attributesOfItem(atPath: state.database)[.size] as! Int) == size / 2)

            try await expectQuarantineAndRefill(h, state)
        }
    }

    @Test func flippedByteInTheMiddle_isDetectedAtStart_quarantinedAndRefilled() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            try await populate(h, state)
            // Flip one bit inside the stored payload nearest the middle of the file: SQLite's
            // own structure checks cannot see it; the row checksum does.
            var data = try Data(contentsOf: URL(fileURLWithPath: state.database))
            let marker = Array("\"marker\":\"M".utf8)
            let bytes = [UInt8](data)
            var best: Int?
            for i in 0..<(bytes.count - marker.count) where bytes[i] == marker[0] && Array(bytes[i..<(i + marker.count)]) == marker {
                if best == nil || abs(i - bytes.count / 2) < abs(best! - bytes.count / 2) { best = i }
            }
            let offset = try #require(best) + marker.count + 4
            data[offset] ^= 0x01
            try data.write(to: URL(fileURLWithPath: state.database))

            try await expectQuarantineAndRefill(h, state)
        }
    }
}
