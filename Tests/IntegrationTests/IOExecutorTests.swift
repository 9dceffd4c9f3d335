import Bus
import BusTestSupport
import Foundation
import Testing

/// `BusService.Execution.ioThread` and `BusClient.taskExecutor`: handlers and callers on the
/// client's I/O thread, with a real kernel in between.
@Suite(.serialized)
struct IOExecutorTests {
    @Test func ioThreadService_answersCallsFromATaskOnTheCallersIOThread() async throws {
        try await Harness.with { h in
            let server = h.client(name: "fastsvc")
            let service = BusService(name: "fastsvc", execution: .ioThread)
            service.method("where", raw: { _ in Array((server.isOnIOThread ? "io" : "elsewhere").utf8) })
            service.method("echo", raw: { $0.payload })
            let handle = try server.serve(service)
            let caller = h.client(name: "caller")
            #expect(await eventually { ((try? await caller.services()) ?? []).contains { $0.service == "fastsvc" } })

            let (thread, replies) = try await Task(executorPreference: caller.taskExecutor) {
                let thread = caller.isOnIOThread ? "io" : "elsewhere"
                let place = try await caller.call("fastsvc", "where")
                // Many calls in flight from tasks on the same I/O thread.
                let replies = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                    for i in 0..<200 {
                        group.addTask(executorPreference: caller.taskExecutor) {
                            (i, try await caller.call("fastsvc", "echo", payload: Array("\(i)".utf8)).payload)
                        }
                    }
                    return try await group.reduce(into: [Int: [UInt8]]()) { $0[$1.0] = $1.1 }
                }
                return (thread + "|" + String(decoding: place.payload, as: UTF8.self), replies)
            }.value
            let parts = thread.split(separator: "|").map(String.init)
            #expect(parts.first == "io", "the caller's task ran off its client's I/O thread")
            #expect(parts.last == "io", "the handler ran off its client's I/O thread")
            #expect(replies.count == 200)
            #expect((0..<200).allSatisfy { replies[$0] == Array("\($0)".utf8) })
            await handle.drain()
        }
    }

    /// A service answering on its I/O thread reads requests in place: calls in binary meta (by
    /// number) and in JSON meta (a trace id, or the caller's own id) are each answered in their
    /// own form and matched to their caller.
    @Test func ioThreadService_answersBinaryAndJSONMetaCalls_eachToItsCaller() async throws {
        try await Harness.with { h in
            let server = h.client(name: "fastsvc")
            let service = BusService(name: "fastsvc", execution: .ioThread)
            service.method("echo", raw: { $0.payload })
            let handle = try server.serve(service)
            let caller = h.client(name: "caller")
            #expect(await eventually { ((try? await caller.services()) ?? []).contains { $0.service == "fastsvc" } })
            let replies = try await withThrowingTaskGroup(of: (Int, ReplyBody).self) { group in
                for k in 0..<60 {
                    let meta =
                        switch k % 3 {
                        case 0: RequestMeta()
                        case 1: RequestMeta(traceID: "trace-\(k)")
                        default: RequestMeta(id: "own-\(k)")
                        }
                    group.addTask { (k, try await caller.call("fastsvc", "echo", payload: Array("\(k)".utf8), timeout: .seconds(10), meta: meta)) }
                }
                return try await group.reduce(into: [Int: ReplyBody]()) { $0[$1.0] = $1.1 }
            }
            for k in 0..<60 {
                #expect(replies[k]?.payload == Array("\(k)".utf8), "call \(k)")
                if k % 3 == 2 { #expect(replies[k]?.meta.id == "own-\(k)") } else { #expect(replies[k]?.meta.id.flatMap { UInt64($0) } != nil) }
            }
            await handle.drain()
        }
    }

    /// Handlers that never suspend answer as their request is read (no task per request), but
    /// not ahead of an earlier request still with an async handler: replies and handler runs
    /// keep arrival order.
    @Test func ioThreadService_syncHandlersAnswerAtOnce_butNeverAheadOfAnEarlierAsyncOne() async throws {
        try await Harness.with { h in
            let server = h.client(name: "mixedsvc")
            let service = BusService(name: "mixedsvc", execution: .ioThread)
            let gate = AsyncStream<Void>.makeStream()
            let log = Locked<[String]>([])
            service.method(
                "slow",
                raw: { _ in
                    log.withLock { $0.append("slow started") }
                    for await _ in gate.stream { break }
                    log.withLock { $0.append("slow") }
                    return []
                })
            service.method(
                "fast",
                raw: { _ in
                    log.withLock { $0.append("fast") }
                    let place = server.isOnIOThread ? "io" : "elsewhere"
                    let inTask = withUnsafeCurrentTask { $0 != nil }
                    return Array("\(place) \(inTask ? "in a task" : "inline")".utf8)
                })
            service.method("fail", raw: { _ in throw ServiceError.conflict("taken") })
            let handle = try server.serve(service)
            let caller = h.client(name: "caller")
            #expect(await eventually { ((try? await caller.services()) ?? []).contains { $0.service == "mixedsvc" } })

            // Alone, a sync handler answers on the I/O thread as the request is read, outside
            // any task; its errors map as usual.
            let alone = try await caller.call("mixedsvc", "fast")
            #expect(alone.status == 200)
            #expect(String(decoding: alone.payload, as: UTF8.self) == "io inline")
            let failed = try await caller.call("mixedsvc", "fail")
            #expect(failed.status == 409)
            #expect(failed.errorBody.code == "conflict")
            #expect(try await caller.call("mixedsvc", "nope").status == 404)
            #expect(await eventually { handle.handled == 3 })
            log.withLock { $0.removeAll() }

            // Behind a slow request the fast one waits its turn.
            let slow = Task { try await caller.call("mixedsvc", "slow", timeout: .seconds(20)) }
            #expect(await eventually { log.withLock { $0 } == ["slow started"] })
            let fast = Task { try await caller.call("mixedsvc", "fast", timeout: .seconds(20)) }
            let bothAtWorker = await eventually {
                ((try? await caller.services()) ?? []).first { $0.service == "mixedsvc" }?.instances.first?.inFlight == 2
            }
            #expect(bothAtWorker)
            // Answered out of turn, it would be back within a millisecond of reaching the worker.
            let overtook = await eventually(timeout: .milliseconds(300)) { log.withLock { $0.contains("fast") } }
            #expect(!overtook, "a sync handler ran ahead of an earlier request")
            gate.continuation.yield()
            #expect(try await slow.value.status == 200)
            // Its turn came in the service's task.
            #expect(String(decoding: try await fast.value.payload, as: UTF8.self) == "io in a task")
            #expect(log.withLock { $0 } == ["slow started", "slow", "fast"])
            #expect(await eventually { handle.handled == 5 })
            await handle.drain()
        }
    }

    @Test func poolService_runsHandlersOffTheIOThread() async throws {
        try await Harness.with { h in
            let server = h.client(name: "poolsvc")
            let service = BusService(name: "poolsvc")
            service.method("where", raw: { _ in Array((server.isOnIOThread ? "io" : "elsewhere").utf8) })
            let handle = try server.serve(service)
            let caller = h.client()
            #expect(await eventually { ((try? await caller.services()) ?? []).contains { $0.service == "poolsvc" } })
            let place = String(decoding: try await caller.call("poolsvc", "where").payload, as: UTF8.self)
            #expect(place == "elsewhere", "a pool handler ran on its client's I/O thread")
            await handle.drain()
        }
    }

    @Test func taskOnTheExecutor_stillRunsAfterTheClientClosed() async throws {
        try await Harness.with { h in
            let client = h.client(name: "closing")
            let gate = AsyncStream<Void>.makeStream()
            let task = Task(executorPreference: client.taskExecutor) { () -> String in
                for await _ in gate.stream { break }
                // Resumed after the I/O thread stopped: the job runs elsewhere, not lost.
                return "done"
            }
            await client.close()
            gate.continuation.yield()
            let result = await withTaskGroup(of: String?.self) { group in
                group.addTask { await task.value }
                group.addTask {
                    try? await Task.sleep(for: .seconds(5))
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            #expect(result == "done")
        }
    }
}
