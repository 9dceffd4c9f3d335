import Bus
import BusTestSupport
import Foundation
import Testing

/// CURVE + ZAP + permissions, checked with real processes and a pyzmq peer that uses pyzmq's
/// own `zmq.auth` certificates.
@Suite(.serialized)
struct SecurityTests {
    static let peerScript = Binaries.packageRoot.appendingPathComponent("Tests/interop/secure_peer.py").path

    func peer(_ h: Harness, _ credentials: [String], _ action: [String], timeout: Double = 2) throws -> TestProcess {
        let keys = h.keys!
        return try h.spawn(
            "/usr/bin/env",
            [
                "python3", Self.peerScript, "--kernel", h.kernelURL, "--server-key",
                keys.appendingPathComponent("kernel.key").path, "--timeout", String(timeout),
            ]
                + credentials + action, name: "pyzmq")
    }

    func lines(_ process: TestProcess) -> [[String: Any]] {
        process.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    func finish(_ process: TestProcess) async -> [[String: Any]] {
        await process.waitForExit(timeout: .seconds(15))
        return lines(process)
    }

    func security(_ h: Harness) async throws -> [String: Any] {
        let reply = try await h.client().call("bus", "stats")
        let stats = try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any]
        return stats?["security"] as? [String: Any] ?? [:]
    }

    @Test func unknownKey_cannotPublishSubscribeOrCall_andEachAttemptIsReported() async throws {
        try await Harness.with(secure: true) { h in
            try await h.startTestService()
            let strangerDir = FileManager.default.temporaryDirectory.appendingPathComponent("stranger-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: strangerDir) }
            let call = try peer(h, ["--new-key", strangerDir], ["call", "testsvc", "echo", "{}"])
            let subscriber = try peer(h, ["--new-key", strangerDir], ["subscribe", "open.", "3"])
            let control = try peer(h, ["--cert", h.keys!.appendingPathComponent("test.key_secret").path], ["subscribe", "open.", "3"])
            let publisher = try peer(h, ["--new-key", strangerDir], ["publish", "testsvc.state", "5"])
            let sub = try h.client(name: "watch").subscribe("testsvc.>")
            let watcher = Collector(sub)
            try await sub.confirm()
            // Events flow all the while: the admitted control peer sees them, the stranger not.
            let bus = h.client(name: "open")
            let ticker = Task {
                while !Task.isCancelled {
                    try? await bus.publish("open.tick", ["t": 1])
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            defer { ticker.cancel() }
            #expect(await finish(call).first?["timeout"] as? Bool == true)
            #expect(await finish(publisher).first?["subscribed"] as? Bool == false)
            #expect(await finish(subscriber).last?["received"] as? Int == 0)
            #expect((await finish(control).last?["received"] as? Int ?? 0) > 10)
            #expect(watcher.live.isEmpty)
            let stats = try await security(h)
            #expect((stats["zap_denied"] as? Int ?? 0) >= 3)
            #expect(h.kernel.stderr.contains("refused unknown key"))
            watcher.stop()
        }
    }

    @Test func handshakesWithManyFreshUnknownKeys_areCounted_andLoggedAFewTimes() async throws {
        try await Harness.with(secure: true) { h in
            let script = Harness.interopFolder.appendingPathComponent("key_flood.py").path
            let serverKey = h.keys!.appendingPathComponent("kernel.key").path
            let flood = try h.spawn(
                Binaries.python, [script, "--kernel", h.kernelURL, "--server-key", serverKey, "--count", "300"], name: "key_flood")
            #expect(await flood.waitForExit(timeout: .seconds(30)) == 0, "key_flood.py: \(flood.stderr)")
            var stats: [String: Any] = [:]
            let counted = await eventually {
                stats = (try? await security(h)) ?? [:]
                return (stats["zap_denied"] as? Int ?? 0) >= 300
            }
            #expect(counted, "bus.stats security: \(stats)")
            // One line per kind of refusal per 10 s, whatever the number of keys (it was one per key).
            let lines = h.kernel.stderr.split(separator: "\n").filter { $0.contains("refused unknown key") }
            #expect(lines.count <= 2, "\(lines.count) log lines for 300 unknown keys")
            #expect((stats["log_suppressed"] as? Int ?? 0) >= 250)
        }
    }

    @Test func knownService_cannotPublishOutsideItsNamespace_orCallAuthToken() async throws {
        try await Harness.with(secure: true) { h in
            try await h.admit("rogue")
            try await h.startTestService(name: "auth")
            let sub = try h.client(name: "watch").subscribe(["feed.>", "rogue.>"])
            let collector = Collector(sub)
            try await sub.confirm()
            let cert = h.keys!.appendingPathComponent("rogue.key_secret").path
            let outside = try peer(h, ["--cert", cert], ["publish", "feed.post.voted", "3"])
            #expect(await finish(outside).first?["published"] as? Int == 3)
            let inside = try peer(h, ["--cert", cert], ["publish", "rogue.ok", "2"])
            #expect(await finish(inside).first?["published"] as? Int == 2)
            #expect(await collector.waitFor(count: 2))
            #expect(collector.live.map(\.topic) == ["rogue.ok", "rogue.ok"])
            let token = await finish(try peer(h, ["--cert", cert], ["call", "auth", "token", "{}"]))
            #expect(token.first?["status"] as? Int == 403)
            let echo = await finish(try peer(h, ["--cert", cert], ["call", "auth", "echo", #"{"a":1}"#]))
            #expect(echo.first?["status"] as? Int == 200)
            let stats = try await security(h)
            #expect(stats["publish_denied"] as? Int == 3)
            #expect((stats["call_denied"] as? Int ?? 0) >= 1)
            #expect(h.kernel.stderr.contains("dropped a publish by rogue on 'feed.post.voted'"))
            collector.stop()
        }
    }

    @Test func wrongServerKey_failsWithAClearErrorWithinTheTimeout() async throws {
        try await Harness.with(secure: true) { h in
            var options = h.options(name: "lost")
            let mine = try ClientSecurity.load(keys: h.keys!, identity: "test")
            options.security = ClientSecurity(keyPair: mine.keyPair, serverKey: try CurveKeyPair.generate().publicKey, identity: "test")
            let client = BusClient(options: options)
            let started = ContinuousClock.now
            await #expect {
                _ = try await client.call("bus", "ping", timeout: .seconds(2))
            } throws: { error in
                guard case .unreachable(_, let reason) = error as? BusError else { return false }
                return reason.contains("handshake")
            }
            #expect(ContinuousClock.now - started < .seconds(3))
            await client.close()
            let wrongKey = try CurveKeyPair.generate()
            let wrongDir = FileManager.default.temporaryDirectory.appendingPathComponent("wrong-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: wrongDir) }
            try wrongKey.write(name: "kernel", to: wrongDir)
            let py = try h.spawn(
                "/usr/bin/env",
                [
                    "python3", Self.peerScript, "--kernel", h.kernelURL, "--server-key",
                    wrongDir.appendingPathComponent("kernel.key").path, "--cert",
                    h.keys!.appendingPathComponent("test.key_secret").path, "call", "bus", "ping",
                ], name: "pyzmq")
            #expect(await finish(py).first?["timeout"] as? Bool == true)
        }
    }

    @Test func nullMechanismClient_isRejected() async throws {
        try await Harness.with(secure: true) { h in
            try await h.startTestService()
            let null = await finish(try peer(h, ["--null"], ["call", "testsvc", "echo", "{}"]))
            #expect(null.first?["timeout"] as? Bool == true)
            #expect(await eventually { h.kernel.stderr.contains("handshake failed") })
        }
    }

    @Test func clientWithoutKeys_isToldTheKernelMayRunWithKeys() async throws {
        try await Harness.with(secure: true) { h in
            var options = h.options(name: "keyless")
            options.security = nil
            let client = BusClient(options: options)
            await #expect {
                _ = try await client.call("bus", "ping", timeout: .seconds(2))
            } throws: { error in
                guard case .unreachable(_, let reason) = error as? BusError else { return false }
                return reason.contains("no CURVE keys") && reason.contains("--keys")
            }
            await client.close()
        }
    }

    @Test func revokedKey_isCutOffWithinFiveSeconds() async throws {
        try await Harness.with(secure: true) { h in
            try await h.admit("temp")
            let cert = h.keys!.appendingPathComponent("temp.key_secret").path
            let subscriber = try peer(h, ["--cert", cert], ["subscribe", "tick.", "12"])
            let bus = h.client(name: "tick")
            let ticker = Task {
                var n = 0
                while !Task.isCancelled {
                    try? await bus.publish("tick.n", ["n": n])
                    n += 1
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            defer { ticker.cancel() }
            #expect(await eventually { lines(subscriber).filter { $0["topic"] != nil }.count >= 5 })
            // It also publishes: its events-in connection must be cut too.
            #expect(await finish(try peer(h, ["--cert", cert], ["publish", "temp.x", "2"])).first?["published"] as? Int == 2)
            try FileManager.default.removeItem(at: h.keys!.appendingPathComponent("authorized/temp.key"))
            let revoked = ContinuousClock.now
            // The kernel notices within its 1 s watch; then the subscriber must go quiet.
            var lastCount = -1
            var quietSince: ContinuousClock.Instant?
            while ContinuousClock.now - revoked < .seconds(7) {
                let count = lines(subscriber).filter { $0["topic"] != nil }.count
                if count != lastCount {
                    lastCount = count
                    quietSince = ContinuousClock.now
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let cutOffAfter = try #require(quietSince) - revoked
            #expect(cutOffAfter < .seconds(5), "events kept arriving \(cutOffAfter) after the key was removed")
            let call = await finish(try peer(h, ["--cert", cert], ["call", "bus", "ping"]))
            #expect(call.first?["timeout"] as? Bool == true || call.first?["status"] as? Int == 403)
            #expect(h.kernel.stderr.contains("removed=temp"))
            #expect(h.kernel.stderr.contains("events-out re-bound"))
            #expect(h.kernel.stderr.contains("events-in re-bound"))
            // The kernel's own publisher (the test identity) keeps going after the re-binds.
            let after = try h.client(name: "watch").subscribe("tick.>")
            let collector = Collector(after)
            #expect(await collector.waitFor(count: 3))
            collector.stop()
            await subscriber.stop()
        }
    }

    @Test func kernel_refusesToStart_withAWorldReadableSecret() async throws {
        let h = try Harness(secure: true)
        defer { try? FileManager.default.removeItem(at: h.keys!) }
        chmod(h.keys!.appendingPathComponent("kernel.key_secret").path, 0o644)
        let result = try await h.busctl(["kernel", "--kernel", h.kernelURL, "--keys", h.keys!.path], timeout: .seconds(10))
        #expect(result.status == 78)
        #expect(result.stderr.contains("must not be readable by group or others"))
    }

    @Test func kernel_refusesToStart_withoutItsZAPHandler() async throws {
        let h = try Harness(secure: true)
        defer { try? FileManager.default.removeItem(at: h.keys!) }
        let result = try await h.busctl(
            ["kernel", "--kernel", h.kernelURL, "--keys", h.keys!.path], timeout: .seconds(10),
            environment: ["BUS_TEST_DISABLE_ZAP": "1"])
        #expect(result.status == 78)
        #expect(result.stderr.contains("ZAP handler is not running"))
        #expect(FreePorts.isFree(Int(h.kernelURL.split(separator: ":").last!)!))
    }

    @Test func keygen_writesCertificatesThatPyzmqReads() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("keygen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let h = try Harness(secure: false)
        let made = try await h.busctl(["keygen", "svc", "--dir", dir.path, "--authorize", "--json"])
        #expect(made.status == 0)
        let info = try #require(try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any])
        var mode = stat()
        stat(dir.appendingPathComponent("svc.key_secret").path, &mode)
        #expect(mode.st_mode & 0o777 == 0o600)
        let py = try TestProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import zmq.auth,sys; p,s=zmq.auth.load_certificate(sys.argv[1]); print(p.decode()); print('secret' if s else 'none')",
                dir.appendingPathComponent("svc.key_secret").path,
            ])
        await py.waitForExit(timeout: .seconds(10))
        #expect(py.stdout.split(separator: "\n").first.map(String.init) == info["public_key"] as? String)
        #expect(py.stdout.contains("secret"))
        // And a certificate pyzmq wrote is read by the library.
        let pyDir = dir.appendingPathComponent("py")
        let mk = try TestProcess(
            "/usr/bin/env",
            ["python3", "-c", "import zmq.auth,sys,os; os.makedirs(sys.argv[1]); zmq.auth.create_certificates(sys.argv[1], 'peer')", pyDir.path])
        await mk.waitForExit(timeout: .seconds(10))
        // pyzmq writes secret files 0644: the library refuses those until they are made private.
        let pySecret = pyDir.appendingPathComponent("peer.key_secret")
        #expect(throws: SecurityError.self) { try CurveKeyPair.load(pySecret) }
        chmod(pySecret.path, 0o600)
        let pair = try CurveKeyPair.load(pySecret)
        #expect(pair.secretKey?.count == 32)
        let again = try await h.busctl(["keygen", "svc", "--dir", dir.path])
        #expect(again.status == 1)
        let bad = try await h.busctl(["keygen", "Bad.Name", "--dir", dir.path])
        #expect(bad.status == 64)
    }
}
