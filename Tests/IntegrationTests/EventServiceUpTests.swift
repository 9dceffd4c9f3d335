import Bus
import BusTestSupport
import Foundation
import Testing

/// `events` under `busctl up` (persist, auth, events): the sample calendar on first start, and
/// `busctl replace events` while callers like and list.
@Suite(.serialized)
struct EventServiceUpTests {
    @Test func busctlUp_loadsTheSample_andReplaceUnderLoad_failsNoCall_andLosesNoLike() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("events-new-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let newBinary = folder.appendingPathComponent("EventService").path
        try FileManager.default.createSymbolicLink(atPath: newBinary, withDestinationPath: Binaries.eventService)

        // Under a sanitizer, as in SupervisorTests: a longer heartbeat for slow processes.
        let slow = TestProcess.underSanitizer
        try await UpSession.with([], packageServices: ["persist", "auth", "events"], environment: slow ? ["BUS_HEARTBEAT_MS": "3000"] : [:]) { s in
            let h = s.harness
            let old = try #require(s.upLine("events"))
            let caller = h.client(name: "tester")
            let sample: EventsWire.List = try await caller.request("events", "list", [String: String](), timeout: .seconds(10))
            #expect(sample.count > 50, "the sample calendar was not imported at the first start")
            #expect(sample.events.allSatisfy { $0.title.hasSuffix("(sample)") })
            try await h.registerUsers(["alice"])
            try await h.signIn("alice")

            // Two callers, each liking its own half of the events one by one and listing between.
            let ids = sample.events.map(\.id)
            let failures = Locked<[String]>([])
            let liked = Locked<Set<String>>([])
            let stop = Locked(false)
            let load = Task {
                await withTaskGroup(of: Void.self) { group in
                    for half in 0..<2 {
                        group.addTask {
                            for (index, id) in ids.enumerated() where index % 2 == half && !stop.withLock({ $0 }) {
                                do {
                                    let like: EventsWire.Like = try await caller.request("events", "like", ["id": id], timeout: .seconds(10))
                                    if like.liked { liked.withLock { _ = $0.insert(id) } }
                                    let _: EventsWire.List = try await caller.request("events", "list", [String: String](), timeout: .seconds(10))
                                } catch {
                                    failures.withLock { $0.append("\(id): \(error)") }
                                }
                            }
                        }
                    }
                }
            }
            defer { stop.withLock { $0 = true } }
            #expect(await eventually(timeout: .seconds(30)) { liked.withLock { $0.count } >= 10 })
            let replaced = try await h.busctl(["replace", "events", "--binary", newBinary, "--timeout", "15"])
            #expect(replaced.status == 0, "stdout: \(replaced.stdout) stderr: \(replaced.stderr)")
            #expect(replaced.stdout.hasPrefix("replaced events: pid \(old.pid) ("), "\(replaced.stdout)")
            let atReplace = liked.withLock { $0.count }
            #expect(await eventually(timeout: .seconds(30)) { liked.withLock { $0.count } >= min(ids.count, atReplace + 10) })
            stop.withLock { $0 = true }
            await load.value

            #expect(failures.withLock { $0 }.isEmpty, "failed calls: \(failures.withLock { $0.prefix(5) })")
            let status = try await s.status()
            #expect(status["events"]?.binary == newBinary)
            #expect(status["events"]?.pid != old.pid)
            // No like lost: the new instance knows every like any instance answered.
            let mine: EventsWire.Mine = try await caller.request("events", "mine", [String: String](), timeout: .seconds(10))
            let expected = liked.withLock { $0 }
            #expect(Set(mine.liked.map(\.id)) == expected)
            #expect(mine.liked.allSatisfy { $0.like_count == 1 })
        }
    }
}
