import Bus
import Foundation
import Testing

@testable import PersistCore

/// Damaged database files: detected at start, never served, quarantined or refused.
@Suite(.serialized)
struct CorruptionTests {
    /// Writes `count` events with recognisable payloads and closes cleanly (WAL checkpointed).
    func populate(_ dir: TempDirectory, count: Int = 400) async throws {
        let engine = try await PersistEngine.open(configuration(dir))
        let events = EngineEvents(engine)
        for seq in 1...count {
            var e = event("data.t\(seq % 4)", seq: UInt64(seq), value: seq)
            e.payload = Array("{\"marker\":\"M\(String(format: "%06d", seq))\",\"pad\":\"\(String(repeating: "p", count: 100))\"}".utf8)
            await engine.append(e)
        }
        #expect(await events.waitForCommitted(count))
        events.stop()
        await engine.close()
        #expect(
            !FileManager.default.fileExists(atPath: dir.database + "-wal")
                || ((try? FileManager.default.attributesOfItem(atPath: dir.database + "-wal")[.size] as? Int) ?? 0) == 0)
    }

    /// Flips one byte inside the payload nearest the middle of the file.
    func flipByteInTheMiddle(_ path: String) throws -> Int {
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        let marker = Array("\"marker\":\"M".utf8)
        var best: Int?
        let bytes = [UInt8](data)
        var i = 0
        while i + marker.count < bytes.count {
            if bytes[i] == marker[0], Array(bytes[i..<(i + marker.count)]) == marker {
                if best == nil || abs(i - bytes.count / 2) < abs(best! - bytes.count / 2) { best = i }
            }
            i += 1
        }
        let offset = try #require(best) + marker.count + 3
        data[offset] ^= 0x01
        try data.write(to: URL(fileURLWithPath: path))
        return offset
    }

    func truncateToHalf(_ path: String) throws {
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(size / 2))
        try handle.close()
    }

    func quarantined(_ dir: TempDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.contains(".corrupt-") && !$0.hasSuffix("-wal") }
    }

    @Test func truncatedFile_refuse_throwsCorruptAndLeavesFile() async throws {
        try await TempDirectory.with { dir in
            try await populate(dir)
            try truncateToHalf(dir.database)
            var config = configuration(dir)
            config.onCorrupt = .refuse
            await #expect {
                _ = try await PersistEngine.open(config)
            } throws: { error in
                guard case PersistError.corruptDatabase(let path, let problems) = error else { return false }
                return path == dir.database && !problems.isEmpty
            }
            #expect(try quarantined(dir).isEmpty)
        }
    }

    @Test func truncatedFile_quarantine_movesItAsideAndStartsEmpty() async throws {
        try await TempDirectory.with { dir in
            try await populate(dir)
            try truncateToHalf(dir.database)
            let engine = try await PersistEngine.open(configuration(dir))
            let quarantine = try #require(engine.quarantine)
            #expect(FileManager.default.fileExists(atPath: quarantine.movedTo))
            #expect(!quarantine.problems.isEmpty)
            #expect(try await engine.restore(prefix: "").isEmpty)
            #expect(try await engine.statistics().store.events == 0)
            await engine.close()
        }
    }

    @Test func flippedByteInPayload_fullCheck_detectedAtStart_quarantined() async throws {
        try await TempDirectory.with { dir in
            try await populate(dir)
            _ = try flipByteInTheMiddle(dir.database)
            var config = configuration(dir)
            config.onCorrupt = .refuse
            await #expect(throws: PersistError.self) { _ = try await PersistEngine.open(config) }
            config.onCorrupt = .quarantine
            let engine = try await PersistEngine.open(config)
            #expect(engine.quarantine?.problems.contains { $0.contains("checksum") } == true)
            #expect(try await engine.statistics().store.events == 0)
            await engine.close()
            #expect(try quarantined(dir).count == 1)
        }
    }

    @Test func flippedByteInPayload_withoutStartCheck_isNeverServed() async throws {
        try await TempDirectory.with { dir in
            try await populate(dir)
            _ = try flipByteInTheMiddle(dir.database)
            var config = configuration(dir)
            config.check = .none
            let engine = try await PersistEngine.open(config)
            var failures = 0
            var served = 0
            for topic in ["data.t0", "data.t1", "data.t2", "data.t3"] {
                var cursor: Int64?
                repeat {
                    do {
                        let page = try await engine.history(HistoryQuery(topic: topic, limit: 1000, cursor: cursor))
                        served += page.events.count
                        cursor = page.nextCursor
                    } catch PersistError.corruptRecord {
                        failures += 1
                        cursor = nil
                    }
                } while cursor != nil
            }
            #expect(failures == 1)
            #expect(served < 400)
            await engine.close()
        }
    }

    @Test func notADatabase_isCorrupt_notAnIOError() async throws {
        try await TempDirectory.with { dir in
            try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: dir.database))
            var config = configuration(dir)
            config.onCorrupt = .refuse
            await #expect {
                _ = try await PersistEngine.open(config)
            } throws: { error in
                if case PersistError.corruptDatabase = error { return true }
                return false
            }
            config.onCorrupt = .quarantine
            let engine = try await PersistEngine.open(config)
            #expect(engine.quarantine != nil)
            await engine.close()
        }
    }
}
