import Bus
import BusKernel
import BusTestSupport
import BusZMQ
import Foundation
import Testing

struct Upper: Codable, Sendable, Equatable { var text: String }
struct InteropValue: Codable, Sendable, Equatable { var value: Int }

/// The pyzmq programs of Tests/interop (written from the 7/MDP text and docs/PROTOCOL.md, not
/// from the Swift code) against a real kernel: Python with Python, Python with Swift, both ways,
/// on the request plane and the event plane. With `BUS_TEST_SECURITY=1` every Python process
/// runs with CURVE (`--keys`, `--identity`) under an identity admitted for it.
@Suite(.serialized)
struct InteropTests {
    static let folder = Binaries.packageRoot.appendingPathComponent("Tests/interop")
    /// The identity of the Python MDP clients under security (the policy lets it call anything
    /// but auth.token and bus.reload).
    static let clientIdentity = "pyclient"

    // MARK: helpers

    /// Starts a Tests/interop program against `h`'s kernel. With security, `identity` is admitted
    /// first and the program gets `--keys` and `--identity`.
    func python(_ h: Harness, _ script: String, _ arguments: [String], identity: String, name: String? = nil) async throws -> TestProcess {
        var args = ["python3", Self.folder.appendingPathComponent(script).path, "--kernel", h.kernelURL] + arguments
        if let keys = h.keys {
            try await h.admit(identity)
            args += ["--keys", keys.path, "--identity", identity]
        }
        return try h.spawn("/usr/bin/env", args, name: name ?? script)
    }

    /// The JSON lines a program printed so far.
    func lines(_ process: TestProcess) -> [[String: Any]] {
        process.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Runs a program to its end (bounded) and returns its exit status and JSON lines.
    func run(
        _ h: Harness, _ script: String, _ arguments: [String], identity: String,
        timeout: Duration = .seconds(20)
    ) async throws -> (status: Int32, lines: [[String: Any]]) {
        let process = try await python(h, script, arguments, identity: identity)
        guard let status = await process.waitForExit(timeout: timeout) else {
            await process.stop()
            throw HarnessError("\(script) \(arguments.joined(separator: " ")) did not exit within \(timeout); stderr:\n\(process.stderr)")
        }
        if status != 0 { Issue.record("\(script) \(arguments.joined(separator: " ")) exited \(status); stderr:\n\(process.stderr)") }
        return (status, lines(process))
    }

    /// One `mdp_client.py` run; its reply lines.
    func mdp(_ h: Harness, _ arguments: [String], socket: String = "req") async throws -> [[String: Any]] {
        try await run(h, "mdp_client.py", arguments + ["--socket", socket, "--timeout", "5"], identity: Self.clientIdentity).lines
    }

    /// Starts `mdp_worker.py` serving `service` (as identity `service` under security) and waits
    /// until the kernel lists one more instance of it.
    @discardableResult
    func startWorker(_ h: Harness, _ service: String, mode: String, instance: String? = nil, _ extra: [String] = []) async throws -> TestProcess {
        let before = try await h.instances(of: service).count
        var args = ["--service", service, "--mode", mode]
        if let instance { args += ["--instance", instance] }
        let worker = try await python(h, "mdp_worker.py", args + extra, identity: service, name: "worker-\(service)")
        let registered = await eventually {
            ((try? await h.instances(of: service)) ?? []).count > before || !worker.isRunning
        }
        guard registered, worker.isRunning else {
            throw HarnessError("mdp_worker.py for \(service) did not register; stderr:\n\(worker.stderr)")
        }
        return worker
    }

    func string(_ object: Any?, _ key: String) -> String? { (object as? [String: Any])?[key] as? String }

    func tally(_ names: [String]) -> [String: Int] { names.reduce(into: [:]) { $0[$1, default: 0] += 1 } }

    /// How many requests a `mdp_worker.py` says it answered.
    func handled(_ worker: TestProcess) -> Int { lines(worker).filter { $0["handled"] != nil }.count }

    // MARK: 7/MDP: Python with Python

    @Test(arguments: ["req", "dealer"])
    func pythonClient_pythonEchoWorker_unmodifiedMDP_replyIsTheRequestBody(socket: String) async throws {
        try await Harness.with { h in
            let worker = try await startWorker(h, "pyecho", mode: "echo")
            // An unmodified MDP worker sends no READY metadata: the kernel names the instance
            // after the connection and knows no version or pid.
            let listed = try #require(try await h.instances(of: "pyecho").first)
            #expect(listed.version == nil && listed.pid == nil)
            #expect(listed.instance.allSatisfy { $0.isHexDigit })
            let replies = try await mdp(h, ["--service", "pyecho", "--frames", "hello", "", #"{"x":1}"#, "wörld", "--count", "2"], socket: socket)
            #expect(replies.count == 2)
            for reply in replies {
                #expect(reply["service"] as? String == "pyecho")
                #expect(reply["frames"] as? [String] == ["hello", "", #"{"x":1}"#, "wörld"])
                #expect(reply["status"] is NSNull)
            }
            #expect(await eventually { lines(worker).filter { $0["handled"] != nil }.count == 2 })
        }
    }

    @Test(arguments: ["req", "dealer"])
    func pythonClient_pythonBusWorker_upper_unknownMethod404_badJSON400(socket: String) async throws {
        try await Harness.with { h in
            try await startWorker(h, "pybus", mode: "bus", instance: "pybus-1")
            let upper = try #require(
                try await mdp(h, ["--service", "pybus", "--method", "upper", "--payload", #"{"text":"hello bus"}"#], socket: socket).first)
            #expect(upper["status"] as? Int == 200)
            #expect(string(upper["payload"], "text") == "HELLO BUS")
            #expect(string(upper["meta"], "from") == "pybus-1")
            #expect(string(upper["meta"], "id")?.hasPrefix("py-") == true)

            let unknown = try #require(try await mdp(h, ["--service", "pybus", "--method", "shout"], socket: socket).first)
            #expect(unknown["status"] as? Int == 404)
            #expect(string(unknown["payload"], "code") == "no_such_method")
            #expect(string(unknown["meta"], "id")?.hasPrefix("py-") == true)

            let badJSON = try #require(
                try await mdp(h, ["--service", "pybus", "--frames", "upper", #"{"id":"bad-json-1"}"#, "{not json"], socket: socket).first)
            #expect(badJSON["status"] as? Int == 400)
            #expect(string(badJSON["payload"], "code") == "invalid_json")
            #expect(string(badJSON["meta"], "id") == "bad-json-1")
        }
    }

    // MARK: 7/MDP: Python with Swift

    @Test(arguments: ["req", "dealer"])
    func pythonClient_swiftWorker_echoAndErrorStatus(socket: String) async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let payload = #"{"a":[1,2],"s":"ü"}"#
            let echo = try #require(try await mdp(h, ["--service", "testsvc", "--method", "echo", "--payload", payload], socket: socket).first)
            #expect(echo["status"] as? Int == 200)
            #expect((echo["frames"] as? [String])?.last == payload)
            #expect(string(echo["meta"], "from")?.hasPrefix("testsvc") == true)
            #expect(string(echo["meta"], "id")?.hasPrefix("py-") == true)
            #expect((echo["meta"] as? [String: Any])?["elapsed_us"] is Int)

            let fail = try #require(
                try await mdp(h, ["--service", "testsvc", "--method", "fail", "--payload", #"{"status":409,"code":"taken"}"#], socket: socket).first)
            #expect(fail["status"] as? Int == 409)
            #expect(string(fail["payload"], "code") == "taken")
            #expect(string(fail["payload"], "message") == "failure requested by the caller")
            #expect(string(fail["meta"], "id")?.hasPrefix("py-") == true)

            // The shortest bus body: the method alone, meta and payload omitted.
            let bare = try #require(try await mdp(h, ["--service", "testsvc", "--frames", "whoami"], socket: socket).first)
            #expect(bare["status"] as? Int == 200)
            #expect(string(bare["payload"], "name") == "testsvc")
        }
    }

    /// The one-frame form and binary meta, as written from docs/PROTOCOL.md in Python, reach a
    /// Swift service, which answers in the form of each request; the kernel answers one for a
    /// service with no worker in kind.
    @Test func pythonClient_oneFrameAndBinaryMeta_swiftWorkerAndKernelAnswerInKind() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let payload = #"{"a":[1,2],"s":"ü"}"#
            for form in ["one-frame", "binary-meta"] {
                let replies = try await mdp(
                    h, ["--service", "testsvc", "--method", "echo", "--payload", payload, "--form", form, "--count", "2"], socket: "dealer")
                #expect(replies.count == 2)
                for (index, reply) in replies.enumerated() {
                    #expect(reply["status"] as? Int == 200, "\(form)")
                    #expect(reply["form"] as? String == form)
                    #expect((reply["frames"] as? [String])?.count == 1)
                    #expect(string(reply["payload"], "s") == "ü")
                    #expect(string(reply["meta"], "from")?.hasPrefix("testsvc") == true)
                    #expect((reply["meta"] as? [String: Any])?["elapsed_us"] is Int)
                    let id = string(reply["meta"], "id")
                    #expect(form == "binary-meta" ? id == String(index + 1) : id?.hasPrefix("py-") == true, "\(form): \(id ?? "no id")")
                }
            }
            // The kernel answers for a service without a worker (after the 2 s the request gave
            // it, less 250 ms, read from the binary meta) with binary meta and the request's number.
            let ghost = try #require(
                try await run(
                    h, "mdp_client.py",
                    ["--service", "ghost", "--method", "m", "--form", "binary-meta", "--socket", "dealer", "--timeout", "2"],
                    identity: Self.clientIdentity
                ).lines.first)
            #expect(ghost["status"] as? Int == 503)
            #expect(ghost["form"] as? String == "binary-meta")
            #expect(string(ghost["meta"], "id") == "1")
            #expect(string(ghost["meta"], "from") == "kernel")
        }
    }

    @Test func swiftClient_pythonWorkers_requestCallAndRawRequest() async throws {
        try await Harness.with { h in
            try await startWorker(h, "pybus", mode: "bus", instance: "pyupper-1")
            try await startWorker(h, "pyecho", mode: "echo")
            let bus = h.client()

            let typed: Upper = try await bus.request("pybus", "upper", ["text": "from swift"], timeout: .seconds(5))
            #expect(typed == Upper(text: "FROM SWIFT"))

            let reply = try await bus.call("pybus", "upper", payload: Array(#"{"text":"call"}"#.utf8), timeout: .seconds(5))
            #expect(reply.status == 200)
            #expect(try JSONDecoder().decode(Upper.self, from: Data(reply.payload)) == Upper(text: "CALL"))
            #expect(reply.meta.from == "pyupper-1")
            #expect(reply.meta.id != nil)

            await #expect {
                let _: Upper = try await bus.request("pybus", "shout", ["text": "x"], timeout: .seconds(5))
            } throws: { error in
                guard case .reply(let status, let code, _) = error as? BusError else { return false }
                return status == 404 && code == "no_such_method"
            }
            let bad = try await bus.call("pybus", "upper", payload: Array("{oops".utf8), timeout: .seconds(5))
            #expect(bad.status == 400)
            #expect(bad.errorBody.code == "invalid_json")

            // An unmodified MDP worker answers with the request body itself, binary included.
            let body: Frames = [Array("anything".utf8), [], [0, 1, 2, 0xFF]]
            let raw = try await bus.rawRequest("pyecho", body: body, timeout: .seconds(5))
            #expect(raw == body)

            // The Swift client sends one-frame bodies: the kernel gave this worker, which did not
            // ask for them, three frames (it answers 400 malformed to anything else), while a
            // Swift service says it reads them.
            // Its meta was binary too, and the worker got it as JSON, with the id as a decimal
            // string (it echoed the id, which the client matched).
            _ = try await h.startTestService(name: "swiftsvc")
            #expect(try await h.instances(of: "pybus").map(\.oneFrame) == [nil])
            #expect(try await h.instances(of: "pybus").map(\.binaryMeta) == [nil])
            #expect(try await h.instances(of: "swiftsvc").map(\.oneFrame) == [true])
            #expect(try await h.instances(of: "swiftsvc").map(\.binaryMeta) == [true])
            #expect(reply.meta.id.map { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) } == true)
        }
    }

    // MARK: 8/MMI

    @Test func mmiService_answers200For_registered_404For_unknown_501ForOtherMMI() async throws {
        try await Harness.with { h in
            try await startWorker(h, "pymmi", mode: "bus")
            func frames(_ reply: [[String: Any]]) -> [String]? { reply.first?["frames"] as? [String] }
            let known = try await mdp(h, ["--mmi", "pymmi"])
            #expect(frames(known) == ["200"])
            #expect(known.first?["service"] as? String == "mmi.service")
            #expect(frames(try await mdp(h, ["--mmi", "nosuch"], socket: "dealer")) == ["404"])
            #expect(frames(try await mdp(h, ["--mmi", "bus"])) == ["200"])
            let other = try await mdp(h, ["--service", "mmi.discovery", "--frames", "pymmi"])
            #expect(frames(other) == ["501"])
            #expect(other.first?["service"] as? String == "mmi.discovery")
        }
    }

    // MARK: load balancing

    @Test func twoPythonWorkers_ofOneService_shareTheLoad() async throws {
        try await Harness.with { h in
            let first = try await startWorker(h, "pyshare", mode: "bus", instance: "share-a")
            let second = try await startWorker(h, "pyshare", mode: "bus", instance: "share-b")
            // One Python client, one request after another.
            let sequential = try await mdp(h, ["--service", "pyshare", "--method", "echo", "--payload", #"{"k":1}"#, "--count", "8"])
            #expect(sequential.count == 8)
            let from = tally(sequential.map { string($0["meta"], "from") ?? "?" })
            // And Swift requests that overlap.
            let bus = h.client()
            let overlapping = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        let reply = try await bus.call("pyshare", "sleep", payload: Array(#"{"ms":150}"#.utf8), timeout: .seconds(10))
                        return reply.status == 200 ? reply.meta.from ?? "?" : "status \(reply.status)"
                    }
                }
                var counts: [String: Int] = [:]
                for try await instance in group { counts[instance, default: 0] += 1 }
                return counts
            }
            #expect(Set(from.keys) == ["share-a", "share-b"], "sequential replies came from \(from)")
            #expect(from.values.allSatisfy { $0 >= 2 }, "sequential replies came from \(from)")
            #expect(Set(overlapping.keys) == ["share-a", "share-b"], "overlapping replies came from \(overlapping)")
            // Each worker's own account agrees.
            #expect(await eventually { handled(first) + handled(second) == 14 })
            let perWorker = [handled(first), handled(second)]
            #expect(perWorker.allSatisfy { $0 >= 3 }, "handled per worker: \(perWorker)")
        }
    }

    // MARK: events: Swift publishers, pyzmq subscriber

    @Test func pythonSubscriber_decodesSwiftPublishers_withWildcardsAndPrefixFiltering() async throws {
        try await Harness.with { h in
            try await h.startTestService(name: "pyfeed")
            let subscriber = try await python(
                h, "bus_sub.py",
                [
                    "--pattern", "pyfeed.*.voted", "--pattern", "swiftpub.>",
                    "--count", "8", "--timeout", "20",
                ], identity: "pysub")
            #expect(
                await eventually(timeout: .seconds(15)) { lines(subscriber).first?["subscribed"] as? Bool == true || !subscriber.isRunning },
                "bus_sub.py did not confirm its subscription; stderr:\n\(subscriber.stderr)")

            // The test client: first topics the patterns reject (outside the wire prefix, and
            // the prefix alone), then three that match, all on one connection, so in order.
            let publisher = h.client(name: "swiftpub")
            try await publisher.publish("swiftpubx.y", ["n": -1])
            try await publisher.publish("other.x", ["n": -1])
            for n in 0..<3 { try await publisher.publish("swiftpub.x", ["n": n]) }
            // The fixture service: inside the wire prefix `pyfeed.` but not matching
            // `pyfeed.*.voted` first, then five that match.
            let caller = h.client()
            for (topic, count) in [("pyfeed.post.created", 2), ("pyfeed.post.voted.extra", 1), ("pyfeed.post.voted", 5)] {
                let done: InteropValue = try await caller.request(
                    "pyfeed", "publish", ["topic": AnyCodable(topic), "count": AnyCodable(count)], timeout: .seconds(5))
                #expect(done.value == count)
            }

            #expect(await subscriber.waitForExit(timeout: .seconds(20)) == 0, "bus_sub.py stderr:\n\(subscriber.stderr)")
            let all = lines(subscriber)
            #expect(!all.contains { $0["malformed"] != nil })
            let events = all.filter { $0["topic"] != nil }
            #expect(events.count == 8)
            #expect(Set(events.compactMap { $0["topic"] as? String }) == ["pyfeed.post.voted", "swiftpub.x"])

            let feed = events.filter { $0["topic"] as? String == "pyfeed.post.voted" }
            #expect(feed.compactMap { $0["seq"] as? Int } == [1, 2, 3, 4, 5])
            #expect(feed.compactMap { ($0["payload"] as? [String: Any])?["value"] as? Int } == [0, 1, 2, 3, 4])
            #expect(feed.allSatisfy { $0["source"] as? String == "pyfeed" })
            #expect(feed.allSatisfy { ($0["instance"] as? String)?.hasPrefix("pyfeed") == true })
            #expect(Set(feed.compactMap { $0["instance"] as? String }).count == 1)

            let swift = events.filter { $0["topic"] as? String == "swiftpub.x" }
            #expect(swift.compactMap { $0["seq"] as? Int } == [1, 2, 3])
            #expect(swift.compactMap { ($0["payload"] as? [String: Any])?["n"] as? Int } == [0, 1, 2])
            #expect(swift.allSatisfy { $0["source"] as? String == "swiftpub" && $0["instance"] as? String == publisher.instance })

            let nowMicros = Int(Date().timeIntervalSince1970 * 1_000_000)
            for event in events {
                #expect(event["content_type"] as? String == "application/json")
                #expect(event["flags"] as? Int == 0)
                #expect(event["gap"] as? Int == 0 && event["duplicate"] as? Bool == false)
                let time = event["time_us"] as? Int ?? 0
                #expect(abs(time - nowMicros) < 60_000_000, "time_us \(time) is not a current timestamp in microseconds")
            }

            // A retained value of a Swift publisher reaches a late pyzmq subscriber as a snapshot.
            let _: InteropValue = try await caller.request("pyfeed", "set", ["value": 7], timeout: .seconds(5))
            #expect(await eventually { (try? await caller.retained("pyfeed.state"))?.meta.seq == 1 })
            let late = try await run(h, "bus_sub.py", ["--pattern", "pyfeed.state", "--count", "1", "--timeout", "10"], identity: "pysub")
            let snapshot = try #require(late.lines.first { $0["topic"] != nil })
            #expect(snapshot["topic"] as? String == "pyfeed.state")
            #expect(snapshot["snapshot"] as? Bool == true && snapshot["retained"] as? Bool == true)
            #expect(snapshot["flags"] as? Int == 0x09)
            #expect(snapshot["seq"] as? Int == 1)
            #expect(snapshot["source"] as? String == "pyfeed")
            #expect((snapshot["payload"] as? [String: Any])?["value"] as? Int == 7)
        }
    }

    // MARK: events: pyzmq publisher, Swift subscribers

    @Test func pythonPublisher_reachesSwiftSubscriber_retainedValue_andLateObserve() async throws {
        try await Harness.with { h in
            let sink = h.client(name: "pysink")
            let wide = try sink.subscribe("pypub.>")
            let narrow = try sink.subscribe("pypub.*.a")
            let wideEvents = Collector(wide)
            let narrowEvents = Collector(narrow)
            try await wide.confirm()
            try await narrow.confirm()

            let other = try await run(h, "bus_pub.py", ["--topic", "pypub.tick.b", "--count", "2", "--source", "pypub"], identity: "pypub")
            #expect(other.lines.first?["published"] as? Int == 2)
            let ticks = try await run(
                h, "bus_pub.py",
                [
                    "--topic", "pypub.tick.a", "--count", "5", "--payload", #"{"i":0}"#, "--index-field", "i",
                    "--source", "pypub", "--instance", "pypub-1",
                ], identity: "pypub")
            #expect(ticks.lines.first?["first_seq"] as? Int == 1 && ticks.lines.first?["last_seq"] as? Int == 5)

            #expect(await wideEvents.waitFor(count: 7))
            #expect(await narrowEvents.waitFor(count: 5))
            #expect(wideEvents.live.filter { $0.topic == "pypub.tick.b" }.count == 2)
            let received = narrowEvents.live
            #expect(received.map(\.topic) == Array(repeating: "pypub.tick.a", count: 5))
            #expect(received.map(\.meta.seq) == [1, 2, 3, 4, 5])
            #expect(received.allSatisfy { $0.meta.source == "pypub" && $0.meta.instance == "pypub-1" && $0.missed == 0 })
            #expect(received.allSatisfy { $0.meta.contentType == "application/json" && $0.meta.flags.isEmpty })
            struct Tick: Decodable { var i: Int }
            #expect(try received.map { try $0.decode(Tick.self).i } == [0, 1, 2, 3, 4])
            let nowMicros = UInt64(Date().timeIntervalSince1970 * 1_000_000)
            #expect(received.allSatisfy { $0.meta.timestampMicros > nowMicros - 60_000_000 && $0.meta.timestampMicros <= nowMicros + 60_000_000 })

            // A retained state published by pyzmq: three changes, seq 1..3.
            let state = try await run(
                h, "bus_pub.py",
                [
                    "--topic", "pypub.state", "--retain", "--count", "3", "--payload", #"{"value":0}"#,
                    "--index-field", "value", "--source", "pypub", "--instance", "pypub-2",
                ], identity: "pypub")
            #expect(state.lines.first?["last_seq"] as? Int == 3)
            let reader = h.client()
            #expect(await eventually { (try? await reader.retained("pypub.state"))?.meta.seq == 3 })
            let kept = try #require(try await reader.retained("pypub.state"))
            #expect(try JSONDecoder().decode(InteropValue.self, from: Data(kept.payload)) == InteropValue(value: 2))
            #expect(kept.meta.source == "pypub" && kept.meta.instance == "pypub-2")
            #expect(kept.meta.isRetained)

            // A late observer gets that value first, then the next pyzmq change, none twice.
            let observer = h.client(name: "late")
            let seen = Locked<[Observed<InteropValue>]>([])
            let task = Task {
                for await observed in try observer.observe("pypub.state", as: InteropValue.self) {
                    seen.withLock { $0.append(observed) }
                }
            }
            defer { task.cancel() }
            #expect(await eventually { !seen.withLock { $0.isEmpty } })
            let first = try #require(seen.withLock { $0.first })
            #expect(first.value == InteropValue(value: 2) && first.seq == 3 && first.origin == .current)
            // The change below must be seen live: the observation's subscription is live in the
            // kernel first.
            try await observer.confirmSubscriptions()
            // bus_pub continues the kernel's sequence of the state topic (reads bus.retained).
            let next = try await run(
                h, "bus_pub.py",
                [
                    "--topic", "pypub.state", "--retain", "--count", "1", "--payload", #"{"value":10}"#,
                    "--source", "pypub", "--instance", "pypub-3",
                ], identity: "pypub")
            #expect(next.lines.first?["first_seq"] as? Int == 4)
            #expect(await eventually { seen.withLock { $0.last?.value.value } == 10 })
            let values = seen.withLock { $0 }
            #expect(values.map(\.value.value) == [2, 10])
            #expect(values.map(\.seq) == [3, 4])
            #expect(values.last?.origin == .live)
            #expect(values.last?.meta.instance == "pypub-3")
            wideEvents.stop()
            narrowEvents.stop()
        }
    }

    // MARK: graceful leave

    @Test func sigtermOnPythonWorker_withRequestInFlight_completes_andKernelReportsItDown() async throws {
        try await Harness.with { h in
            let worker = try await startWorker(h, "pysleep", mode: "bus", instance: "pysleep-1", ["--drain-timeout", "3"])
            let bus = h.client()
            let down = try bus.subscribe("bus.service.down")
            let downEvents = Collector(down)
            try await down.confirm()

            async let reply = bus.call("pysleep", "sleep", payload: Array(#"{"ms":1000}"#.utf8), timeout: .seconds(10))
            #expect(await eventually { ((try? await h.instances(of: "pysleep")) ?? []).first?.inFlight == 1 })
            let signalled = ContinuousClock.now
            worker.signal(SIGTERM)
            // The worker sent DISCONNECT: it is draining, no longer offered by MMI.
            #expect(await eventually(timeout: .seconds(3)) { ((try? await h.instances(of: "pysleep")) ?? []).first?.draining == true })
            let mmi = try await bus.rawRequest("mmi.service", body: [Array("pysleep".utf8)], timeout: .seconds(3))
            #expect(mmi == [Array("404".utf8)])

            let answer = try await reply
            #expect(answer.status == 200)
            #expect(String(decoding: answer.payload, as: UTF8.self) == #"{"slept_ms":1000}"#)
            #expect(answer.meta.from == "pysleep-1")

            let status = await worker.waitForExit(timeout: .seconds(3))
            #expect(status == 0)
            #expect(ContinuousClock.now - signalled < .milliseconds(2500))
            let last = lines(worker).last
            #expect(last?["disconnected"] as? Bool == true && last?["acknowledged"] as? Bool == true)
            #expect(last?["handled"] as? Int == 1)

            let sawDown = await eventually {
                downEvents.all.contains { (try? $0.decode(ServiceEvent.self))?.service == "pysleep" }
            }
            #expect(sawDown)
            let event = try #require(downEvents.all.compactMap { try? $0.decode(ServiceEvent.self) }.first { $0.service == "pysleep" })
            #expect(event.instance == "pysleep-1")
            #expect(event.reason == "drained")
            #expect(event.workers == 0)
            #expect(event.version == "interop")
            #expect(event.pid == Int(worker.pid))
            #expect(try await h.instances(of: "pysleep").isEmpty)
            downEvents.stop()
        }
    }
}
