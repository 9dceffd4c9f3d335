import Bus
import BusKernel
import BusTestSupport
import Foundation
import Testing

struct Counter: Codable, Sendable, Equatable { var value: Int }
struct Identity: Codable, Sendable { var instance: String; var pid: Int32; var name: String }

@Suite(.serialized)
struct RequestPlaneTests {
    @Test func swiftClient_callsSwiftWorker_throughKernel() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let bus = h.client()
            let reply = try await bus.call("testsvc", "echo", payload: Array(#"{"a":1}"#.utf8))
            #expect(reply.status == 200)
            #expect(reply.payload == Array(#"{"a":1}"#.utf8))
            let me: Identity = try await bus.request("testsvc", "whoami", [String: String]())
            #expect(me.name == "testsvc")
        }
    }

    /// The kernel forwards one-frame bodies in the messages libzmq received them in, and keeps a
    /// copy of a small request while it waits or is in flight: bodies of every size arrive
    /// intact, in both directions, with most of the calls waiting for the one-at-a-time worker.
    @Test func bodiesOfEverySize_crossTheKernelIntact() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let bus = h.client()
            let sizes = [0, 1, 32, 33, 100, 8_000, 8_192, 8_300, 100_000, 900_000]
            let calls = sizes + sizes.reversed()
            func payload(_ k: Int) -> [UInt8] { (0..<calls[k]).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ k) } }
            let replies = try await withThrowingTaskGroup(of: (Int, ReplyBody).self) { group in
                for k in calls.indices {
                    group.addTask { (k, try await bus.call("testsvc", "echo", payload: payload(k), timeout: .seconds(20))) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            for k in calls.indices {
                #expect(replies[k]?.status == 200, "call \(k), \(calls[k]) bytes")
                #expect(replies[k]?.payload == payload(k), "call \(k), \(calls[k]) bytes")
            }
        }
    }

    /// A call with a trace id (which binary meta cannot carry) goes with JSON meta, its request
    /// number written as the id's text; it is matched by that number, beside calls in binary meta.
    @Test func callWithJSONMeta_isMatchedByItsNumber_besideBinaryMetaCalls() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let bus = h.client()
            let replies = try await withThrowingTaskGroup(of: (Int, ReplyBody).self) { group in
                for k in 1...32 {
                    let meta = k.isMultiple(of: 2) ? RequestMeta(traceID: "trace-\(k)") : RequestMeta()
                    group.addTask { (k, try await bus.call("testsvc", "echo", payload: Array("\(k)".utf8), timeout: .seconds(10), meta: meta)) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            for k in 1...32 {
                #expect(replies[k]?.payload == Array("\(k)".utf8), "call \(k)")
                #expect(replies[k]?.meta.id.flatMap { UInt64($0) } != nil, "call \(k) has its number as its id")
            }
        }
    }

    /// Replies are matched by the client's own request numbers (sent as binary meta) and by the
    /// ids callers gave (sent as JSON): a caller's id that spells one of those numbers still gets
    /// its own reply, and so does the numbered request answered while it waits.
    @Test func callerIDsThatSpellRequestNumbers_eachGetTheirOwnReply() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let bus = h.client()
            // The slow request first (the service answers in arrival order); the others are sent
            // once the kernel has handed it to the worker, so they wait behind it.
            let slow = Task { try await bus.call("testsvc", "sleep", payload: Array(#"{"ms":400}"#.utf8), timeout: .seconds(10)) }
            let dispatched = await eventually { ((try? await h.instances(of: "testsvc")) ?? []).first?.inFlight == 1 }
            #expect(dispatched)
            // Custom ids 1...64 cover every number this client has used so far, the slow one's too.
            let replies = try await withThrowingTaskGroup(of: (Int, ReplyBody).self) { group in
                for k in 1...64 {
                    group.addTask {
                        (k, try await bus.call("testsvc", "echo", payload: Array("\(k)".utf8), timeout: .seconds(10), meta: RequestMeta(id: "\(k)")))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            for k in 1...64 {
                #expect(replies[k]?.payload == Array("\(k)".utf8), "caller id \(k)")
                #expect(replies[k]?.meta.id == "\(k)")
            }
            let slowReply = try await slow.value
            #expect(slowReply.status == 200)
            // The sleep's own answer (an identity), not one of the echoes.
            #expect((try? JSONDecoder().decode(Identity.self, from: Data(slowReply.payload)))?.name == "testsvc")
        }
    }

    /// A worker whose kernel goes silent (stopped, not gone) reconnects on its own timer and
    /// serves again once the kernel resumes; the worker's I/O loop must not touch the socket it
    /// closed while reconnecting.
    @Test func silentKernel_workerReconnectsOnItsTimer_andServesAfterTheKernelResumes() async throws {
        // Kernel and worker agree on a short heartbeat (as BUS_HEARTBEAT_MS makes them in a
        // deployment): a worker expecting 200 ms heartbeats from a kernel that sends one a
        // second would give up on it after every reconnect.
        try await Harness.with(kernelArguments: ["--heartbeat-ms", "200"]) { h in
            try await h.admit("quietsvc")
            let service = try h.spawn(
                Binaries.testService, ["--name", "quietsvc"], name: "quietsvc", environment: ["BUS_HEARTBEAT_MS": "200"])
            let registered = await eventually { ((try? await h.instances(of: "quietsvc")) ?? []).count == 1 }
            #expect(registered)
            h.kernel.signal(SIGSTOP)
            // 3 heartbeats of 200 ms without a word from the kernel: the worker reconnects.
            let reconnected = await eventually(timeout: .seconds(10)) { service.stderr.contains("reconnects") }
            h.kernel.signal(SIGCONT)
            #expect(reconnected)
            let caller = h.client()
            let served = await eventually(timeout: .seconds(15), every: .milliseconds(100)) {
                (try? await caller.call("quietsvc", "echo", payload: Array("{}".utf8), timeout: .seconds(1)))?.status == 200
            }
            #expect(served)
            let running = service.isRunning
            #expect(running)
        }
    }

    @Test func request_beforeAnyWorker_isAnsweredOnceWorkerRegisters() async throws {
        try await Harness.with { h in
            let bus = h.client()
            async let reply = bus.call("late", "echo", payload: Array("{}".utf8), timeout: .seconds(10))
            // The request is queued in the kernel: it shows in bus.services as queued.
            let queued = await eventually {
                ((try? await bus.services()) ?? []).first { $0.service == "late" }?.queued == 1
            }
            #expect(queued)
            try await h.startTestService(name: "late")
            #expect(try await reply.status == 200)
        }
    }

    @Test func request_withNoWorkerInTime_gets503NoSuchService() async throws {
        try await Harness.with { h in
            let reply = try await h.client().call("ghost", "echo", timeout: .seconds(1))
            #expect(reply.status == 503)
            #expect(reply.errorBody.code == "no_such_service")
        }
    }

    @Test func workerKilledMidRequest_callerGetsErrorWithinHeartbeatExpiry() async throws {
        try await Harness.with(kernelArguments: ["--heartbeat-ms", "300"]) { h in
            let service = try await h.startTestService(arguments: [])
            let bus = h.client()
            let started = ContinuousClock.now
            async let reply = bus.call("testsvc", "sleep", payload: Array(#"{"ms":20000}"#.utf8), timeout: .seconds(15))
            let inFlight = await eventually {
                ((try? await h.instances(of: "testsvc")) ?? []).first?.inFlight == 1
            }
            #expect(inFlight)
            service.signal(SIGKILL)
            let answer = try await reply
            #expect(answer.status == 503)
            #expect(answer.errorBody.code == "worker_lost")
            // Heartbeat expiry is 3 x 300 ms; allow scheduling slack, far below the 15 s timeout.
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }

    /// A call cancelled while the worker holds it throws `.cancelled` at once, long before the
    /// reply or the timeout; a call made from a task already cancelled throws it without
    /// reaching the kernel (no request queued for a service that has no worker).
    @Test func cancelledCall_throwsCancelled_withoutWaitingForTheReply() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let bus = h.client()
            let waiting = Task { () async throws(BusError) -> ReplyBody in
                try await bus.call("testsvc", "sleep", payload: Array(#"{"ms":20000}"#.utf8), timeout: .seconds(30))
            }
            let inFlight = await eventually { ((try? await h.instances(of: "testsvc")) ?? []).first?.inFlight == 1 }
            #expect(inFlight)
            let cancelled = ContinuousClock.now
            waiting.cancel()
            let outcome = await waiting.result
            #expect(throws: BusError.cancelled) { try outcome.get() }
            // The reply would come after 20 s, the timeout after 30 s.
            #expect(ContinuousClock.now - cancelled < .seconds(10))

            let early = Task { () async throws(BusError) -> ReplyBody in
                withUnsafeCurrentTask { $0?.cancel() }
                return try await bus.call("nobody", "echo", timeout: .seconds(5))
            }
            let earlyOutcome = await early.result
            #expect(throws: BusError.cancelled) { try earlyOutcome.get() }
            let services = try await bus.services()
            #expect(!services.contains { $0.service == "nobody" }, "nothing was queued for it")
        }
    }

    @Test func twoWorkers_shareTheLoad() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            try await h.startTestService()
            let bus = h.client()
            let pids = try await withThrowingTaskGroup(of: Int32.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let id: Identity = try await bus.request("testsvc", "sleep", ["ms": 100], timeout: .seconds(10))
                        return id.pid
                    }
                }
                var pids: [Int32: Int] = [:]
                for try await pid in group { pids[pid, default: 0] += 1 }
                return pids
            }
            #expect(pids.count == 2)
            #expect(pids.values.allSatisfy { $0 >= 2 })
        }
    }

    @Test func sigterm_withRequestInFlight_completesAndLeavesCleanly() async throws {
        try await Harness.with { h in
            let service = try await h.startTestService()
            let bus = h.client()
            let downEvents = try bus.subscribe("bus.service.down")
            // Live in the kernel before the service can leave: the loop below waits for the event.
            try await downEvents.confirm()
            async let reply = bus.call("testsvc", "sleep", payload: Array(#"{"ms":600}"#.utf8), timeout: .seconds(10))
            #expect(await eventually { ((try? await h.instances(of: "testsvc")) ?? []).first?.inFlight == 1 })
            let signalled = ContinuousClock.now
            service.signal(SIGTERM)
            #expect(try await reply.status == 200)
            let status = await service.waitForExit(timeout: .seconds(2) + .milliseconds(500))
            #expect(status == 0)
            #expect(ContinuousClock.now - signalled < .seconds(2) + .milliseconds(500))
            var sawDown = false
            for await event in downEvents {
                let payload = try event.decode(ServiceEvent.self)
                if payload.service == "testsvc" { sawDown = true; break }
            }
            #expect(sawDown)
            #expect(try await h.instances(of: "testsvc").isEmpty)
        }
    }

    @Test func typedRequest_errorReply_throwsWithStatusAndCode() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            await #expect(throws: BusError.reply(status: 409, code: "taken", message: "failure requested by the caller")) {
                let _: Counter = try await h.client().request("testsvc", "fail", ["status": AnyCodable(409), "code": AnyCodable("taken")])
            }
        }
    }
}

/// A tiny heterogenous JSON value for test payloads.
struct AnyCodable: Encodable, Sendable {
    let value: any Sendable
    init(_ value: any Sendable) { self.value = value }
    func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch value {
        case let v as Int: try c.encode(v)
        case let v as String: try c.encode(v)
        case let v as Bool: try c.encode(v)
        case let v as Double: try c.encode(v)
        default: try c.encodeNil()
        }
    }
}
