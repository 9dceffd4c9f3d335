import Bus
import BusTestSupport
import Foundation
import Testing

/// A service restoring its state through `persist` (the fixture with `--restore-ms`).
@Suite(.serialized)
struct PersistRestoreTests {
    func set(_ h: Harness, _ service: String, _ value: Int) async throws {
        let _: Counter = try await h.client().request(service, "set", ["value": value], timeout: .seconds(5))
    }

    func get(_ h: Harness, _ service: String) async throws -> Counter {
        try await h.client().request(service, "get", [String: String](), timeout: .seconds(5))
    }

    /// Waits until the kernel's retained value of `topic` has `seq` (a publish reaches the
    /// kernel asynchronously).
    func retained(_ h: Harness, _ topic: String, seq: UInt64) async -> Bool {
        await eventually { (try? await h.client().retained(topic))?.meta.seq == seq }
    }

    /// Waits until persist's snapshot of `topic` has `seq`.
    func persisted(_ h: Harness, _ topic: String, seq: UInt64) async -> Bool {
        await eventually { storedCounter(try? await h.persistRestore(topic))?.seq == seq }
    }

    @Test func serviceRestartedAfterSIGKILL_comesBackWithThePublishedState_andContinuesTheSequence() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            try await h.startPersist(stateDirectory: state.path)
            var service = try await h.startTestService(name: "ctr", arguments: ["--restore-ms", "3000"])
            #expect(try await get(h, "ctr") == Counter(value: 0))
            for value in [3, 1, 4, 1, 5] { try await set(h, "ctr", value) }
            #expect(await persisted(h, "ctr.state", seq: 5))

            try await h.kill(service, service: "ctr")
            service = try await h.startTestService(name: "ctr", arguments: ["--restore-ms", "3000"])
            #expect(try await get(h, "ctr") == Counter(value: 5))
            #expect(service.stderr.contains("restored ctr.state"))
            try await set(h, "ctr", 9)
            #expect(await retained(h, "ctr.state", seq: 6))
            #expect(await persisted(h, "ctr.state", seq: 6))

            // The thin busctl commands over the same methods.
            let restore = try await h.busctl(["restore", "ctr.state", "--json"])
            #expect(restore.status == 0)
            let restored = try JSONSerialization.jsonObject(with: Data(restore.stdout.utf8)) as? [String: Any]
            #expect(storedCounter(restored)?.seq == 6)
            #expect(storedCounter(restored)?.value == 9)
            let history = try await h.busctl(["history", "ctr.state", "--json", "--limit", "3"])
            #expect(history.status == 0)
            let events = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]] ?? []
            #expect(events.compactMap { storedCounter($0)?.value } == [1, 5, 9])
            let table = try await h.busctl(["history", "ctr.state"])
            #expect(table.stdout.contains("SEQ") && table.stdout.contains("{\"value\":9}"))
            let missing = try await h.busctl(["restore", "nothing.saved"])
            #expect(missing.status == 2)
            #expect(missing.stderr.contains("not_found"))
        }
    }

    @Test func kernelAndServiceRestarted_stateComesFromDisk_unrestoredServiceCannotOverwriteIt() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            var kernel: TestProcess = h.kernel
            var persist = try await h.startPersist(stateDirectory: state.path)
            var service = try await h.startTestService(name: "ctr", arguments: ["--restore-ms", "3000"])
            for value in 1...4 { try await set(h, "ctr", value * 10) }
            #expect(await persisted(h, "ctr.state", seq: 4))

            // 1. The kernel (and its retained values) and the service die: persist refills the
            //    new kernel, the service's state comes back from persist's disk, and the
            //    sequence continues after it.
            service.signal(SIGKILL)
            kernel = try await h.restartKernel(kernel)
            #expect(await retained(h, "ctr.state", seq: 4))
            #expect(await eventually(timeout: .seconds(15)) { ((try? await h.instances(of: "persist")) ?? []).count == 1 })
            service = try await h.startTestService(name: "ctr", arguments: ["--restore-ms", "5000"])
            #expect(try await get(h, "ctr") == Counter(value: 40))
            #expect(service.stderr.contains("source=persist"))
            try await set(h, "ctr", 50)
            #expect(await retained(h, "ctr.state", seq: 5))
            #expect(await persisted(h, "ctr.state", seq: 5))

            // 2. Now persist is down too and the kernel empty: the service cannot know the
            //    saved state. It starts empty, and its publishes are provisional.
            persist.signal(SIGKILL)
            service.signal(SIGKILL)
            #expect(await persist.waitForExit(timeout: .seconds(5)) != nil)
            kernel = try await h.restartKernel(kernel)
            service = try await h.startTestService(name: "ctr", arguments: ["--restore-ms", "1000"])
            #expect(service.stderr.contains("provisional"))
            #expect(try await get(h, "ctr") == Counter(value: 0))
            try await set(h, "ctr", 99)
            #expect(await retained(h, "ctr.state", seq: 1))
            let provisional = try #require(try await h.client().retained("ctr.state"))
            #expect(provisional.meta.flags.contains(.provisional))

            // persist comes back, catches up the provisional value into its history, and keeps
            // the saved state as the snapshot.
            persist = try await h.startPersist(stateDirectory: state.path)
            let inHistory = await eventually {
                let events = (try? await h.persistHistory("ctr.state")) ?? []
                return events.contains { storedCounter($0)?.value == 99 }
            }
            #expect(inHistory)
            let snapshot = storedCounter(try await h.persistRestore("ctr.state"))
            #expect(snapshot?.seq == 5)
            #expect(snapshot?.value == 50)

            // A restart restores the saved state, not the provisional one, and continues after
            // every sequence number seen.
            try await h.kill(service, service: "ctr")
            service = try await h.startTestService(name: "ctr", arguments: ["--restore-ms", "5000"])
            #expect(try await get(h, "ctr") == Counter(value: 50))
            try await set(h, "ctr", 60)
            #expect(await retained(h, "ctr.state", seq: 6))
            let next = try #require(try await h.client().retained("ctr.state"))
            #expect(next.meta.seq == 6)
            #expect(!next.meta.flags.contains(.provisional))
            #expect(await persisted(h, "ctr.state", seq: 6))
        }
    }
}
