import Bus
import BusSupport
import BusTestSupport
import Foundation
import Testing

/// The real `busctl` binary against a real kernel and the fixture service, for every
/// subcommand and each of its error paths.
@Suite(.serialized)
struct BusctlTests {
    // MARK: usage

    @Test func badArguments_exit64_withOneLineAndUsage() async throws {
        try await withHarness { h in
            let cases: [[String]] = [
                ["nosuch"],
                ["services", "extra"],
                ["call", "testsvc"],
                ["call", "testsvc", "echo", "--timeout", "soon"],
                ["call", "testsvc", "echo", "{}", "extra"],
                ["get", "a.>.b"],
                ["pub", "Bad.Topic", "{}"],
                ["monitor", "Bad"],
                ["monitor", "--count", "0"],
                ["wait"],
                ["stats", "--interval", "0"],
                ["graph", "--format", "png"],
                ["record"],
                ["record", "out.rec", "a..b"],
                ["replay"],
                ["replay", "x.rec", "--speed", "-1"],
                ["monitor", "--no-such-option"],
            ]
            for arguments in cases {
                let result = try await h.busctl(arguments)
                #expect(result.status == 64, "busctl \(arguments) -> \(result.status)")
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 2, "busctl \(arguments): \(result.stderr)")
                #expect(lines.first?.hasPrefix("error: ") == true)
                #expect(lines.last?.hasPrefix("usage: busctl ") == true)
                #expect(result.stdout.isEmpty)
            }
        }
    }

    @Test func kernel_badHeartbeat_fromFlagOrEnvironment_exits64() async throws {
        try await Harness.with { h in
            for (arguments, env) in [
                (["kernel", "--heartbeat-ms", "5"], [String: String]()), (["kernel"], ["BUS_HEARTBEAT_MS": "fast"]),
                (["kernel"], ["BUS_HEARTBEAT_MS": "120000"]),
            ] {
                let result = try await h.busctl(arguments + ["--kernel", "tcp://127.0.0.1:1"], timeout: .seconds(10), environment: env)
                #expect(result.status == 64, "busctl \(arguments) \(env) -> \(result.status)")
                #expect(result.stderr.contains("heartbeat"), "\(result.stderr)")
            }
        }
    }

    @Test func help_forEverySubcommand() async throws {
        try await withHarness { h in
            let top = try await h.busctl(["--help"])
            #expect(top.status == 0)
            let names = ["services", "call", "get", "pub", "monitor", "wait", "stats", "graph", "record", "replay"]
            for name in names {
                #expect(top.stdout.contains("  \(name)"))
                let result = try await h.busctl([name, "--help"])
                #expect(result.status == 0)
                #expect(result.stdout.contains("USAGE: busctl \(name) "))
                #expect(result.stdout.contains("--kernel <URL>"))
            }
            #expect(try await h.busctl(["ls", "--help"]).stdout.contains("USAGE: busctl services"))
        }
    }

    // MARK: unreachable kernel

    @Test func unreachableKernel_exits5_quickly_forEveryCommand() async throws {
        try await withHarness { h in
            let nowhere = "tcp://127.0.0.1:\(FreePorts.kernelBase())"
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let recording = directory.appendingPathComponent("valid.rec").path
            try Data((header() + "\n").utf8).write(to: URL(fileURLWithPath: recording))
            let unwritten = directory.appendingPathComponent("never.rec").path
            let fast = ["--kernel", nowhere, "--connect-timeout", "0.3"]
            let commands: [[String]] = [
                ["services"], ["call", "testsvc", "echo"], ["get", "x.y"], ["pub", "x.y", "{}"],
                ["monitor", "--count", "1"], ["stats"], ["graph"], ["record", unwritten], ["replay", recording],
                ["wait", "testsvc", "--timeout", "0.3"],
            ]
            let results = try await withThrowingTaskGroup(of: ([String], Int32, String).self) { group in
                for command in commands {
                    group.addTask {
                        let result = try await h.busctl(command + fast)
                        return (command, result.status, result.stderr)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (command, status, stderr) in results {
                #expect(status == 5, "busctl \(command) -> \(status): \(stderr)")
                #expect(stderr.contains("cannot reach the kernel at \(nowhere)"), "\(command): \(stderr)")
                #expect(stderr.split(separator: "\n").count == 1)
            }
            #expect(!FileManager.default.fileExists(atPath: unwritten))
            // With the default connect timeout a call with a long --timeout still fails fast.
            let started = ContinuousClock.now
            let call = try await h.busctl(["call", "testsvc", "echo", "--timeout", "30", "--kernel", nowhere])
            #expect(call.status == 5)
            #expect(ContinuousClock.now - started < .seconds(6))
        }
    }

    // MARK: services

    @Test func services_listsTheFixtureInstance_asTableAndJSON() async throws {
        try await Harness.with { h in
            let empty = try await h.busctl(["services"])
            #expect(empty.status == 0)
            #expect(empty.stdout == "no services registered\n")
            let service = try await h.startTestService()
            #expect(try await h.client().call("testsvc", "echo").status == 200)

            let table = try await h.busctl(["services"])
            #expect(table.status == 0)
            let lines = table.stdout.split(separator: "\n").map(String.init)
            try #require(lines.count == 2)
            for column in ["SERVICE", "INSTANCE", "VERSION", "HOST/PID", "UPTIME", "HEARTBEAT", "HANDLED", "IN-FLIGHT", "FAILED"] {
                #expect(lines[0].contains(column))
            }
            #expect(lines[1].hasPrefix("testsvc "))
            #expect(lines[1].contains("/\(service.pid) "))
            #expect(lines[1].hasSuffix("ready"))

            let json = try await h.busctl(["ls", "--json"])
            #expect(json.status == 0)
            struct Reply: Decodable { var services: [ServiceSnapshot] }
            let reply = try JSONDecoder().decode(Reply.self, from: Data(json.stdout.utf8))
            let instance = try #require(reply.services.first { $0.service == "testsvc" }?.instances.first)
            #expect(instance.pid == Int(service.pid))
            #expect(instance.handled == 1)
            #expect(instance.inFlight == 0)
        }
    }

    // MARK: call

    @Test func call_printsReplies_andMapsEveryOutcomeToItsExitCode() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let echo = try await h.busctl(["call", "testsvc", "echo", #"{"b":[1,2],"a":"x"}"#])
            #expect(echo.status == 0)
            #expect(echo.stdout == "{\n  \"a\": \"x\",\n  \"b\": [\n    1,\n    2\n  ]\n}\n")

            let json = try await h.busctl(["call", "testsvc", "echo", #"{"a":1}"#, "--json"])
            #expect(json.status == 0)
            let object = try jsonObject(json.stdout)
            #expect(object["status"] as? Int == 200)
            #expect((object["payload"] as? [String: Any])?["a"] as? Int == 1)

            let piped = try await h.busctl(["call", "testsvc", "echo", "-"], stdin: Data(#"{"from":"stdin"}"#.utf8))
            #expect(piped.status == 0)
            #expect(piped.stdout.contains(#""from": "stdin""#))

            let error = try await h.busctl(["call", "testsvc", "fail", #"{"status":409,"code":"taken"}"#])
            #expect(error.status == 2)
            #expect(error.stderr == "error: testsvc.fail answered 409 taken: failure requested by the caller\n")
            let errorJSON = try await h.busctl(["call", "testsvc", "fail", #"{"status":409,"code":"taken"}"#, "--json"])
            #expect(errorJSON.status == 2)
            let errorObject = try jsonObject(errorJSON.stdout)
            #expect(errorObject["status"] as? Int == 409)
            #expect((errorObject["error"] as? [String: Any])?["code"] as? String == "taken")

            let noMethod = try await h.busctl(["call", "testsvc", "nope"])
            #expect(noMethod.status == 2)
            #expect(noMethod.stderr.contains("404 no_such_method"))

            let ghost = try await h.busctl(["call", "ghost", "echo", "--timeout", "1"])
            #expect(ghost.status == 4)
            #expect(ghost.stderr.hasPrefix("error: no such service 'ghost'"))

            let badJSON = try await h.busctl(["call", "testsvc", "echo", #"{"a":"#])
            #expect(badJSON.status == 65)
            #expect(badJSON.stderr.hasPrefix("error: the JSON argument is not valid JSON"))
            let badStdin = try await h.busctl(["call", "testsvc", "echo", "-"], stdin: Data("not json".utf8))
            #expect(badStdin.status == 65)
            #expect(badStdin.stderr.hasPrefix("error: standard input is not valid JSON"))

            let slow = try await h.busctl(["call", "testsvc", "sleep", #"{"ms":1000}"#, "--timeout", "0.3"])
            #expect(slow.status == 3)
            #expect(slow.stderr == "error: no reply from testsvc.sleep within 0.3 s\n")
        }
    }

    // MARK: pub and get

    @Test func pub_thenGet_roundTrips_andRejectsBadInput() async throws {
        try await Harness.with { h in
            let none = try await h.busctl(["get", "demo.state"])
            #expect(none.status == 1)
            #expect(none.stderr == "error: no retained value for topic 'demo.state'\n")

            // A fresh process's first publish arrives (it used to be lost to the slow joiner).
            let first = try await h.busctl(["pub", "demo.state", #"{"value":1}"#, "--retain"])
            #expect(first.status == 0)
            #expect(first.stdout == "published 11 B to demo.state (retained)\n")
            let get = try await h.busctl(["get", "demo.state"])
            #expect(get.status == 0)
            #expect(get.stdout.hasPrefix("demo.state  seq 1  from busctl ("))
            #expect(get.stdout.hasSuffix("{\n  \"value\": 1\n}\n"))

            let piped = try await h.busctl(["pub", "demo.state", "--retain"], stdin: Data(#"{"value":2}"#.utf8))
            #expect(piped.status == 0)
            let json = try jsonObject(try await h.busctl(["get", "demo.state", "--json"]).stdout)
            #expect(json["seq"] as? Int == 2)
            #expect(json["source"] as? String == "busctl")
            #expect((json["payload"] as? [String: Any])?["value"] as? Int == 2)
            #expect((json["time"] as? String)?.hasSuffix("Z") == true)

            let bad = try await h.busctl(["pub", "demo.state", #"{"value":"#, "--retain"])
            #expect(bad.status == 65)
            #expect(bad.stderr.hasPrefix("error: the JSON argument is not valid JSON"))
            let empty = try await h.busctl(["pub", "demo.state"])
            #expect(empty.status == 65)
            #expect(empty.stderr == "error: standard input is empty; expected JSON such as {\"value\":1}\n")
            let stillTwo = try jsonObject(try await h.busctl(["get", "demo.state", "--json"]).stdout)
            #expect(stillTwo["seq"] as? Int == 2)

            try await h.startTestService()
            _ = try await h.client().call("testsvc", "set", payload: Array(#"{"value":7}"#.utf8))
            // The reply comes on the request plane and the service's retained event on the event
            // plane, so the kernel may answer `get` before the event reached it: wait for it.
            var rows: [Substring] = []
            try #require(
                try await eventually {
                    let all = try await h.busctl(["get", ">"])
                    rows = all.stdout.split(separator: "\n")
                    return all.status == 0 && rows.count == 3
                })
            #expect(rows[1].hasPrefix("demo.state ") && rows[1].hasSuffix(#"{"value":2}"#))
            #expect(rows[2].hasPrefix("testsvc.state ") && rows[2].contains(" testsvc ") && rows[2].hasSuffix(#"{"value":7}"#))
            #expect(try await h.busctl(["get", "nothing.>"]).status == 1)
        }
    }

    // MARK: monitor

    @Test func monitor_showsCurrentValueFirst_thenLiveEvents() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            _ = try await h.client().call("testsvc", "set", payload: Array(#"{"value":7}"#.utf8))
            let monitor = try h.spawn(Binaries.busctl, ["monitor", "testsvc.>", "--json", "--count", "4", "--timeout", "20"], name: "monitor")
            // The current value arriving proves the subscription reached the kernel.
            #expect(await eventually { monitor.stdout.contains(#""snapshot":true"#) })
            _ = try await h.client().call("testsvc", "publish", payload: Array(#"{"topic":"testsvc.tick","count":3}"#.utf8))
            #expect(await monitor.waitForExit(timeout: .seconds(10)) == 0)
            let events = try monitor.stdout.split(separator: "\n").map { try jsonObject(String($0)) }
            try #require(events.count == 4)
            #expect(events[0]["topic"] as? String == "testsvc.state")
            #expect(events[0]["snapshot"] as? Bool == true)
            #expect((events[0]["payload"] as? [String: Any])?["value"] as? Int == 7)
            for (index, event) in events.dropFirst().enumerated() {
                #expect(event["topic"] as? String == "testsvc.tick")
                #expect(event["source"] as? String == "testsvc")
                #expect(event["seq"] as? Int == index + 1)
                #expect((event["payload"] as? [String: Any])?["value"] as? Int == index)
                #expect(event["snapshot"] == nil)
                #expect(event["time"] is String)
            }

            let pretty = try await h.busctl(["monitor", "testsvc.state", "--count", "1"])
            #expect(pretty.status == 0)
            let line = pretty.stdout.trimmingCharacters(in: .newlines)
            #expect(
                line.range(of: #"^\d\d:\d\d:\d\d\.\d{3}  testsvc\.state +testsvc +#1 +\[current\] \{"value":7\}$"#, options: .regularExpression)
                    != nil, "\(line)")

            let short = try await h.busctl(["monitor", "nothing.>", "--count", "2", "--timeout", "0.3"])
            #expect(short.status == 3)
            #expect(short.stderr == "error: saw 0 of 2 events within 0.3 s\n")
            let timed = try await h.busctl(["monitor", "testsvc.state", "--live", "--timeout", "0.3"])
            #expect(timed.status == 0)
            #expect(timed.stdout.isEmpty)
        }
    }

    /// A busctl command whose parent dies without stopping it stops by itself (ParentWatch,
    /// asked for with BUS_EXIT_WITH_PARENT: how the test harness and `busctl up` leave no
    /// orphans); a value inherited from further up is ignored, not taken for a dead parent.
    @Test func anyCommand_stopsWhenItsParentDies_butIgnoresAnInheritedWatch() async throws {
        try await Harness.with { h in
            // The harness gives the shell BUS_EXIT_WITH_PARENT=<test pid>: the second monitor
            // inherits that value, the first gets the shell's own pid. Both end by themselves
            // after 60 s should a failed expectation skip the kills below.
            let script = #"""
                BUS_EXIT_WITH_PARENT=$$ "$0" monitor --kernel "$1" --live --timeout 60 > /dev/null &
                echo "watched $!"
                "$0" monitor --kernel "$1" --live --timeout 60 --log-level debug > /dev/null &
                echo "inherited $!"
                wait
                """#
            let shell = try h.spawn("/bin/sh", ["-c", script, Binaries.busctl, h.kernelURL], name: "sh")
            #expect(await eventually { shell.stdout.contains("inherited ") })
            var pids: [String: Int32] = [:]
            for line in shell.stdout.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2, let pid = Int32(parts[1]) { pids[String(parts[0])] = pid }
            }
            let watched = try #require(pids["watched"])
            let inherited = try #require(pids["inherited"])
            defer {
                kill(watched, SIGKILL)
                kill(inherited, SIGKILL)
            }
            #expect(await eventually { shell.stderr.contains("not this one's parent (inherited); not watching") })
            shell.signal(SIGKILL)
            let stopped = await eventually(timeout: .seconds(15)) { ParentWatch.hasEnded(watched) }
            #expect(stopped, "the watched monitor still runs after its parent died")
            #expect(!ParentWatch.hasEnded(inherited))
        }
    }

    @Test func monitor_showsAGapInSequenceNumbers() async throws {
        try await Harness.with { h in
            let json = try h.spawn(Binaries.busctl, ["monitor", "gap.>", "--json", "--count", "3", "--timeout", "20"], name: "monitor-json")
            let pretty = try h.spawn(Binaries.busctl, ["monitor", "gap.>", "--count", "3", "--timeout", "20"], name: "monitor-pretty")
            #expect(await waitForSubscription(h, prefix: "gap.", count: 2))
            let bus = h.client(name: "gapper")
            for seq: UInt64 in [1, 2, 5] {
                let meta = EventMeta(seq: seq, timestampMicros: 1_000_000, source: "gapper", instance: "gapper-1")
                try bus.send(event: [Array("gap.x".utf8), meta.encode(), Array("{\"n\":\(seq)}".utf8)])
            }
            #expect(await json.waitForExit(timeout: .seconds(10)) == 0)
            #expect(await pretty.waitForExit(timeout: .seconds(10)) == 0)
            let events = try json.stdout.split(separator: "\n").map { try jsonObject(String($0)) }
            #expect(events.map { $0["seq"] as? Int } == [1, 2, 5])
            #expect(events.map { $0["missed"] as? Int } == [nil, nil, 2])
            let lines = pretty.stdout.split(separator: "\n").map(String.init)
            try #require(lines.count == 4)
            #expect(lines[2] == "--- gap: 2 event(s) missed before gap.x #5 (from gapper-1) ---")
            #expect(lines[3].contains("gap.x") && lines[3].hasSuffix(#"{"n":5}"#))
        }
    }

    // MARK: wait

    @Test func wait_returnsWhenRegistered_andNamesWhatIsMissing() async throws {
        try await Harness.with { h in
            let waiting = try h.spawn(Binaries.busctl, ["wait", "late", "--timeout", "20"], name: "wait")
            try await h.startTestService(name: "late")
            #expect(await waiting.waitForExit(timeout: .seconds(5)) == 0)
            #expect(waiting.stdout == "ready: late\n")

            let missing = try await h.busctl(["wait", "late", "ghost", "--timeout", "0.4"])
            #expect(missing.status == 3)
            #expect(missing.stderr == "error: timed out after 0.4 s waiting for: ghost (registered: late)\n")
            let json = try await h.busctl(["wait", "late", "ghost", "--timeout", "0.2", "--json"])
            #expect(json.status == 3)
            let object = try jsonObject(json.stdout)
            #expect(object["ready"] as? [String] == ["late"])
            #expect(object["missing"] as? [String] == ["ghost"])
        }
    }

    // MARK: stats

    @Test func stats_computesRatesFromTwoSamples_andWatchRepeats() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let monitor = try h.spawn(Binaries.busctl, ["monitor", "testsvc.>", "--live"], name: "monitor")
            #expect(await waitForSubscription(h, prefix: "testsvc.", count: 1))
            let traffic = Task {
                while !Task.isCancelled {
                    _ = try? await h.client().call("testsvc", "publish", payload: Array(#"{"topic":"testsvc.tick","count":20}"#.utf8))
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            defer { traffic.cancel() }
            let json = try await h.busctl(["stats", "--json", "--interval", "0.5"])
            #expect(json.status == 0)
            let sample = try jsonObject(json.stdout)
            let interval = try #require(sample["interval_s"] as? Double)
            #expect(interval >= 0.4 && interval < 2)
            let topics = try #require(sample["topics"] as? [[String: Any]])
            let tick = try #require(topics.first { $0["topic"] as? String == "testsvc.tick" })
            #expect((tick["msgs_per_s"] as? Double ?? 0) > 0)
            #expect((tick["bytes_per_s"] as? Double ?? 0) > 0)
            #expect(tick["subscribers"] as? Int == 1)
            #expect(tick["publishers"] as? [String] == ["testsvc"])
            let services = try #require(sample["services"] as? [[String: Any]])
            let service = try #require(services.first { $0["service"] as? String == "testsvc" })
            #expect((service["requests_per_s"] as? Double ?? 0) > 0)
            #expect(service["p50_us"] is Int)
            #expect(service["p99_us"] is Int)

            let text = try await h.busctl(["stats", "--interval", "0.2"])
            #expect(text.status == 0)
            #expect(text.stdout.hasPrefix("kernel up "))
            for word in ["TOPIC", "MSG/S", "BYTES/S", "DROPS", "SUBS", "testsvc.tick", "SERVICE", "REQ/S", "P50", "P99", "ERRORS"] {
                #expect(text.stdout.contains(word), "\(word) missing from:\n\(text.stdout)")
            }

            let watch = try h.spawn(Binaries.busctl, ["stats", "--watch", "--json", "--interval", "0.2"], name: "watch")
            #expect(await eventually { watch.stdout.split(separator: "\n").count >= 2 })
            watch.signal(SIGINT)
            #expect(await watch.waitForExit(timeout: .seconds(3)) == 0)
            await monitor.stop()
        }
    }

    // MARK: graph

    @Test func graph_drawsPublishersSubscribersAndCalls() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            _ = try await h.busctl(["call", "testsvc", "publish", #"{"topic":"testsvc.tick","count":2}"#])
            let monitor = try h.spawn(Binaries.busctl, ["monitor", "testsvc.>"], name: "monitor")
            #expect(await waitForSubscription(h, prefix: "testsvc.", count: 1))

            let dot = try await h.busctl(["graph"])
            #expect(dot.status == 0)
            #expect(dot.stdout.hasPrefix("digraph swiftbus {"))
            for line in [
                #""service:testsvc" [label="testsvc\n1 instance""#,
                #""topic:testsvc.tick" [label="testsvc.tick""#,
                #""service:testsvc" -> "topic:testsvc.tick" [label="2"];"#,
                #""topic:testsvc.tick" -> "subscription:testsvc." [style=dashed];"#,
                #""service:busctl" -> "service:testsvc" ["#,
                #"label="1 call"];"#,
            ] {
                #expect(dot.stdout.contains(line), "\(line) missing from:\n\(dot.stdout)")
            }
            let json = try jsonObject(try await h.busctl(["graph", "--json"]).stdout)
            let edges = try #require(json["edges"] as? [[String: Any]])
            #expect(edges.contains { $0["kind"] as? String == "calls" && $0["from"] as? String == "service:busctl" && $0["count"] as? Int == 1 })

            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let svg = directory.appendingPathComponent("bus.svg").path
            if findOnPath("dot") != nil {
                let rendered = try await h.busctl(["graph", "--format", "svg", "--output", svg])
                #expect(rendered.status == 0, "\(rendered.stderr)")
                let text = try String(contentsOfFile: svg, encoding: .utf8)
                #expect(text.contains("<svg") && text.contains("testsvc.tick"))
            }
            let noGraphviz = try await h.busctl(["graph", "--format", "svg"], environment: ["PATH": directory.path])
            #expect(noGraphviz.status == 1)
            #expect(noGraphviz.stderr.hasPrefix("error: --format svg needs Graphviz, and 'dot' is not on PATH"))
            await monitor.stop()
        }
    }

    // MARK: record and replay

    @Test func record_thenReplay_monitorSeesTheSameTopicsAndPayloads() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            _ = try await h.client().call("testsvc", "set", payload: Array(#"{"value":3}"#.utf8))
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("session.rec").path
            let recorder = try h.spawn(Binaries.busctl, ["record", file, "testsvc.>", "--count", "5", "--duration", "20"], name: "record")
            // The current value is the first event recorded: the subscription is in place.
            #expect(await eventually { ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").count >= 2 })
            _ = try await h.client().call("testsvc", "publish", payload: Array(#"{"topic":"testsvc.tick","count":3}"#.utf8))
            _ = try await h.client().call("testsvc", "set", payload: Array(#"{"value":4}"#.utf8))
            #expect(await recorder.waitForExit(timeout: .seconds(10)) == 0)
            #expect(recorder.stderr.hasPrefix("recorded 5 events ("))
            #expect(recorder.stderr.hasSuffix(" to \(file)\n"))

            let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { try jsonObject(String($0)) }
            try #require(lines.count == 6)
            #expect(lines[0]["format"] as? String == "swiftbus-recording")
            #expect(lines[0]["version"] as? Int == 1)
            #expect(lines[0]["protocol"] as? Int == 1)
            #expect(lines[0]["started_us"] is Int)
            let recorded = lines.dropFirst().map { line in
                (
                    topic: line["topic"] as! String, payload: Data(base64Encoded: line["payload_b64"] as! String)!,
                    meta: try! EventMeta.decode(Array(Data(base64Encoded: line["meta_b64"] as! String)!)), offset: line["t_us"] as! Int
                )
            }
            #expect(recorded.map(\.topic) == ["testsvc.state", "testsvc.tick", "testsvc.tick", "testsvc.tick", "testsvc.state"])
            #expect(
                recorded.map { String(decoding: $0.payload, as: UTF8.self) } == [
                    #"{"value":3}"#, #"{"value":0}"#, #"{"value":1}"#, #"{"value":2}"#, #"{"value":4}"#,
                ])
            #expect(recorded[0].meta.flags.contains(.snapshot))
            #expect(recorded.map(\.offset) == recorded.map(\.offset).sorted())
            #expect(recorded.allSatisfy { $0.meta.source == "testsvc" })

            let monitor = try h.spawn(
                Binaries.busctl, ["monitor", "testsvc.>", "--live", "--json", "--count", "5", "--timeout", "20"], name: "monitor")
            #expect(await waitForSubscription(h, prefix: "testsvc.", count: 1))
            let replay = try await h.busctl(["replay", file, "--speed", "0"])
            #expect(replay.status == 0, "\(replay.stderr)")
            #expect(replay.stderr.hasPrefix("replayed 5 events ("))
            #expect(await monitor.waitForExit(timeout: .seconds(10)) == 0)
            let seen = try monitor.stdout.split(separator: "\n").map { try jsonObject(String($0)) }
            #expect(seen.map { $0["topic"] as? String } == recorded.map(\.topic))
            for (event, original) in zip(seen, recorded) {
                let payload = try JSONSerialization.data(withJSONObject: event["payload"]!, options: [.sortedKeys, .fragmentsAllowed])
                #expect(String(decoding: payload, as: UTF8.self) == String(decoding: original.payload, as: UTF8.self))
                #expect(event["replayed"] as? Bool == true)
                #expect(event["snapshot"] == nil)
                #expect(event["seq"] as? Int == Int(original.meta.seq))
                #expect(event["instance"] as? String == original.meta.instance)
                #expect(event["time_us"] as? Int == Int(original.meta.timestampMicros))
            }
            // The replay did not roll the current value back.
            let current = try jsonObject(try await h.busctl(["get", "testsvc.state", "--json"]).stdout)
            #expect((current["payload"] as? [String: Any])?["value"] as? Int == 4)

            let again = try await h.busctl(["record", file, "--count", "1"])
            #expect(again.status == 1)
            #expect(again.stderr == "error: \(file) exists; pass --force to overwrite it\n")
        }
    }

    @Test func replay_rejectsBadFiles_beforeSendingAnything() async throws {
        try await Harness.with { h in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            func write(_ name: String, _ text: String) throws -> String {
                let path = directory.appendingPathComponent(name).path
                try Data(text.utf8).write(to: URL(fileURLWithPath: path))
                return path
            }
            let meta = Data(EventMeta(seq: 1, timestampMicros: 1, source: "x", instance: "x-1").encode()).base64EncodedString()
            func event(_ n: Int) -> String {
                #"{"t_us":0,"topic":"bad.one","meta_b64":"\#(meta)","payload_b64":"\#(Data("{\"n\":\(n)}".utf8).base64EncodedString())"}"#
            }
            let cases: [(String, String, String)] = [
                ("garbage.rec", "hello\n", "is not a swiftbus recording"),
                ("future.rec", header(version: 2) + "\n", "line 1: recording format version 2 is not supported"),
                ("protocol.rec", header(protocolVersion: 9) + "\n", "line 1: events were recorded with protocol 9"),
                ("line.rec", header() + "\n" + event(1) + "\n{\"t_us\":5}\n", "line 3: no topic"),
                (
                    "meta.rec", header() + "\n" + #"{"t_us":0,"topic":"a.b","meta_b64":"AAAA","payload_b64":""}"# + "\n",
                    "line 2: malformed message: event meta is 3 bytes"
                ),
            ]
            let monitor = try h.spawn(Binaries.busctl, ["monitor", "bad.>", "--json"], name: "monitor")
            #expect(await waitForSubscription(h, prefix: "bad.", count: 1))
            for (name, text, message) in cases {
                let result = try await h.busctl(["replay", try write(name, text)])
                #expect(result.status == 65, "\(name): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
            }
            let missing = try await h.busctl(["replay", directory.appendingPathComponent("missing.rec").path])
            #expect(missing.status == 1)
            #expect(missing.stderr.hasPrefix("error: cannot read "))
            // The valid first event of line.rec was never sent: only ok.rec's arrives.
            let valid = try await h.busctl(["replay", try write("ok.rec", header() + "\n" + event(2) + "\n")])
            #expect(valid.status == 0)
            #expect(await eventually { monitor.stdout.contains(#""n":2"#) })
            #expect(!monitor.stdout.contains(#""n":1"#))
            #expect(monitor.stdout.split(separator: "\n").count == 1)
            await monitor.stop()
        }
    }
}

// MARK: helpers

private func jsonObject(_ text: String) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
    return try #require(value as? [String: Any], "not a JSON object: \(text)")
}

private func header(version: Int = 1, protocolVersion: Int = 1) -> String {
    #"{"format":"swiftbus-recording","version":\#(version),"protocol":\#(protocolVersion),"started_us":1,"patterns":[">"]}"#
}

/// A harness whose kernel is not started (for usage errors and an unreachable kernel).
private func withHarness(_ body: (Harness) async throws -> Void) async throws {
    let h = try Harness()
    do {
        try await body(h)
    } catch {
        await h.shutdown()
        throw error
    }
    await h.shutdown()
}

private func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("busctl-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

private func findOnPath(_ name: String) -> String? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// Waits until the kernel counts `count` subscriptions with exactly `prefix` (a subscriber's
/// subscription has reached the kernel, so what is published next reaches it).
private func waitForSubscription(_ h: Harness, prefix: String, count: Int) async -> Bool {
    await eventually {
        guard let reply = try? await h.client().call("bus", "stats"),
            let object = try? JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any],
            let subscriptions = object["subscriptions"] as? [[String: Any]]
        else { return false }
        return subscriptions.contains { $0["prefix"] as? String == prefix && ($0["count"] as? Int ?? 0) >= count }
    }
}
