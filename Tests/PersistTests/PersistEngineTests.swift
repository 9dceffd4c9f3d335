import Bus
import BusTestSupport
import Foundation
import Testing

@testable import PersistCore

@Suite(.serialized)
struct PersistEngineTests {
    @Test func append_commitsHistoryAndSnapshot_andAnnouncesOnlyAfterCommit() async throws {
        try await TempDirectory.with { dir in
            let engine = try await PersistEngine.open(configuration(dir))
            let events = EngineEvents(engine)
            for seq in UInt64(1)...20 { await engine.append(event("ctr.state", seq: seq, value: Int(seq))) }
            #expect(await events.waitForCommitted(20))
            let snapshot = try #require(try await engine.restore(topic: "ctr.state"))
            #expect(snapshot.meta.seq == 20)
            #expect(snapshot.payload == Array("{\"value\":20}".utf8))
            let page = try await engine.history(HistoryQuery(topic: "ctr.state", limit: 100))
            #expect(page.events.map(\.meta.seq) == Array(1...20))
            #expect(page.nextCursor == nil)
            let announced = events.reports.value.flatMap(\.committed).flatMap(\.ranges).flatMap { Array($0) }
            #expect(announced.sorted() == Array(1...20))
            events.stop()
            await engine.close()
        }
    }

    @Test func append_burst_isGroupCommitted_fewerCommitsThanEvents() async throws {
        try await TempDirectory.with { dir in
            let engine = try await PersistEngine.open(configuration(dir))
            let events = EngineEvents(engine)
            let count = 5000
            for i in 0..<count { await engine.append(event("feed.t\(i % 7)", seq: UInt64(i / 7 + 1), value: i)) }
            #expect(await events.waitForCommitted(count))
            let commits = events.reports.value.count
            #expect(commits < count / 5, "a burst of \(count) events took \(commits) commits")
            let stats = try await engine.statistics()
            #expect(stats.store.events == count)
            #expect(stats.store.topics == 7)
            #expect(stats.writer.committedEvents == UInt64(count))
            events.stop()
            await engine.close()
        }
    }

    @Test func append_sameEventTwice_isStoredOnce() async throws {
        try await TempDirectory.with { dir in
            let engine = try await PersistEngine.open(configuration(dir))
            let events = EngineEvents(engine)
            let live = event("ctr.state", seq: 1, value: 1, time: 42)
            await engine.append(live)
            await engine.append(event("ctr.state", seq: 1, value: 1, flags: [.retained, .snapshot], time: 42, origin: .snapshot))
            await engine.append(event("ctr.state", seq: 1, value: 1, time: 42, origin: .catchUp))
            #expect(await events.waitForCommitted(3))
            let page = try await engine.history(HistoryQuery(topic: "ctr.state"))
            #expect(page.events.count == 1)
            #expect(page.events.first?.origin == .live)
            #expect(events.reports.value.reduce(0) { $0 + $1.duplicates } == 2)
            events.stop()
            await engine.close()
        }
    }

    @Test func snapshot_lowerSeqNeverOverwrites_resetDoes_provisionalNeverOverSaved() async throws {
        try await TempDirectory.with { dir in
            let engine = try await PersistEngine.open(configuration(dir))
            let events = EngineEvents(engine)
            await engine.append(event("cfg.state", seq: 10, value: 10))
            await engine.append(event("cfg.state", seq: 3, value: 3, instance: "svc-2"))
            #expect(await events.waitForCommitted(2))
            #expect(try await engine.restore(topic: "cfg.state")?.meta.seq == 10)
            await engine.append(event("cfg.state", seq: 50, value: 0, instance: "svc-3", flags: [.retained, .provisional]))
            #expect(await events.waitForCommitted(3))
            #expect(try await engine.restore(topic: "cfg.state")?.meta.seq == 10, "a provisional value replaced saved state")
            await engine.append(event("cfg.state", seq: 1, value: 1, instance: "svc-4", flags: [.retained, .reset]))
            #expect(await events.waitForCommitted(4))
            #expect(try await engine.restore(topic: "cfg.state")?.payload == Array("{\"value\":1}".utf8))
            // Every value is in the history, whatever the snapshot did.
            #expect(try await engine.history(HistoryQuery(topic: "cfg.state")).events.count == 4)
            events.stop()
            await engine.close()
        }
    }

    @Test func snapshot_survivesReopen_andRuleUsesStoredHead() async throws {
        try await TempDirectory.with { dir in
            var engine = try await PersistEngine.open(configuration(dir))
            var events = EngineEvents(engine)
            await engine.append(event("cfg.state", seq: 7, value: 7))
            #expect(await events.waitForCommitted(1))
            events.stop()
            await engine.close()
            engine = try await PersistEngine.open(configuration(dir))
            events = EngineEvents(engine)
            await engine.append(event("cfg.state", seq: 2, value: 2, instance: "svc-2"))
            #expect(await events.waitForCommitted(1))
            #expect(try await engine.restore(topic: "cfg.state")?.meta.seq == 7)
            events.stop()
            await engine.close()
        }
    }

    @Test func restore_prefix_returnsEveryTopicUnderItInOrder_paged() async throws {
        try await TempDirectory.with { dir in
            let engine = try await PersistEngine.open(configuration(dir))
            let events = EngineEvents(engine)
            for topic in ["auth.state", "feed.a", "feed.b", "feed.c", "feedx.z"] { await engine.append(event(topic, seq: 1, value: 1)) }
            #expect(await events.waitForCommitted(5))
            #expect(try await engine.restore(prefix: "feed.").map(\.topic) == ["feed.a", "feed.b", "feed.c"])
            #expect(try await engine.restore(prefix: "feed.", after: "feed.a", limit: 1).map(\.topic) == ["feed.b"])
            #expect(try await engine.restore(prefix: "").count == 5)
            #expect(try await engine.restore(topic: "nope.state") == nil)
            events.stop()
            await engine.close()
        }
    }

    @Test func history_filtersAndPagesWithCursor_bothOrders() async throws {
        try await TempDirectory.with { dir in
            let engine = try await PersistEngine.open(configuration(dir))
            let events = EngineEvents(engine)
            for seq in UInt64(1)...30 { await engine.append(event("t.x", seq: seq, value: Int(seq), time: 1000 + seq)) }
            #expect(await events.waitForCommitted(30))
            var seen: [UInt64] = []
            var cursor: Int64?
            repeat {
                let page = try await engine.history(HistoryQuery(topic: "t.x", fromSeq: 5, toSeq: 24, limit: 7, cursor: cursor))
                seen += page.events.map(\.meta.seq)
                cursor = page.nextCursor
            } while cursor != nil
            #expect(seen == Array(5...24))
            let byTime = try await engine.history(HistoryQuery(topic: "t.x", sinceMicros: 1010, untilMicros: 1012))
            #expect(byTime.events.map(\.meta.seq) == [10, 11, 12])
            let newest = try await engine.history(HistoryQuery(topic: "t.x", limit: 3, descending: true))
            #expect(newest.events.map(\.meta.seq) == [30, 29, 28])
            let next = try await engine.history(HistoryQuery(topic: "t.x", limit: 3, cursor: newest.nextCursor, descending: true))
            #expect(next.events.map(\.meta.seq) == [27, 26, 25])
            events.stop()
            await engine.close()
        }
    }

    @Test func compact_appliesRetentionPerPrefix_keepsSnapshots() async throws {
        try await TempDirectory.with { dir in
            var config = configuration(dir)
            config.retention = try RetentionPolicy(parsing: "feed.=-:5,old.=1h:-")
            let engine = try await PersistEngine.open(config)
            let events = EngineEvents(engine)
            let now = WallClock.microsNow()
            for seq in UInt64(1)...20 {
                await engine.append(event("feed.x", seq: seq, value: Int(seq)))
                await engine.append(event("auth.state", seq: seq, value: Int(seq)))
                await engine.append(event("old.state", seq: seq, value: Int(seq), stored: seq <= 15 ? now - 7_200_000_000 : now))
            }
            #expect(await events.waitForCommitted(60))
            let result = try await engine.compact()
            #expect(result.deleted == 15 + 15)
            #expect(try await engine.history(HistoryQuery(topic: "feed.x")).events.map(\.meta.seq) == Array(16...20))
            #expect(try await engine.history(HistoryQuery(topic: "old.state")).events.map(\.meta.seq) == Array(16...20))
            #expect(try await engine.history(HistoryQuery(topic: "auth.state")).events.count == 20)
            #expect(try await engine.restore(topic: "feed.x")?.meta.seq == 20)
            events.stop()
            await engine.close()
        }
    }

    @Test func diskFull_reportsErrorKeepsRunning_andLosesNothingOnceThereIsRoom() async throws {
        try await TempDirectory.with { dir in
            var config = configuration(dir)
            config.maxDatabaseBytes = 64 * 4096
            config.retention = RetentionPolicy(rules: [])
            let engine = try await PersistEngine.open(config)
            let events = EngineEvents(engine)
            let payload = String(repeating: "x", count: 2000)
            let count = 300
            let producer = Task {
                for seq in 1...count {
                    var e = event("big.state", seq: UInt64(seq), value: seq)
                    e.payload = Array("{\"v\":\"\(payload)\"}".utf8)
                    await engine.append(e)
                }
            }
            #expect(await eventually { !events.failures.value.isEmpty })
            let failure = try #require(events.failures.value.first)
            #expect(failure.error.kind == "disk_full")
            #expect(engine.writerStatistics.failingSinceMicros != nil)
            #expect(engine.writerStatistics.lastErrorCode == "disk_full")
            // Reads still work while writes fail.
            _ = try await engine.restore(topic: "big.state")
            try await engine.setMaxDatabaseBytes(nil)
            #expect(await events.waitForCommitted(count))
            await producer.value
            #expect(events.others.value.contains("recovered"))
            #expect(engine.writerStatistics.failingSinceMicros == nil)
            var seqs: [UInt64] = []
            var cursor: Int64?
            repeat {
                let page = try await engine.history(HistoryQuery(topic: "big.state", limit: 1000, cursor: cursor))
                seqs += page.events.map(\.meta.seq)
                cursor = page.nextCursor
            } while cursor != nil
            #expect(seqs == Array(1...UInt64(count)))
            events.stop()
            await engine.close()
        }
    }
}
