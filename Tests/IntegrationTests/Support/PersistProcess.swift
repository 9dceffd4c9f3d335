import Bus
import BusTestSupport
import Foundation
import Testing

extension Binaries {
    /// The `persist` service executable (product `PersistService`).
    static var persist: String { path("PersistService") }
}

/// A fresh state directory for `persist`, removed by `remove()`.
struct StateDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("persist-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path }
    var database: String { url.appendingPathComponent("persist.sqlite").path }

    /// Files moved aside by quarantine.
    var quarantined: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.contains(".corrupt-") && !$0.hasSuffix("-wal") }
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

extension Harness {
    /// Starts `persist` on `stateDirectory` and waits until this process answers `stats` with
    /// `ready` (subscription live, catch-up from the kernel read).
    @discardableResult
    func startPersist(stateDirectory: String, arguments: [String] = [], waitReady: Bool = true) async throws -> TestProcess {
        try await admit("persist")
        let process = try spawn(Binaries.persist, ["--state-dir", stateDirectory] + arguments, name: "persist")
        guard waitReady else { return process }
        let pid = Int(process.pid)
        let ready = await eventually(timeout: .seconds(20), every: .milliseconds(50)) {
            guard process.isRunning else { return true }
            let stats = try? await self.persist("stats", timeout: .milliseconds(800), retryFor: .zero)
            return stats?["ready"] as? Bool == true && (stats?["pid"] as? NSNumber)?.intValue == pid
        }
        guard ready, process.isRunning else {
            throw HarnessError("persist did not become ready; stderr:\n\(process.stderr)")
        }
        return process
    }

    /// Calls `persist.method` and returns the JSON object it answers. Timeouts and 503s are
    /// retried for `retryFor`: after a SIGKILL the dead instance's workers stay registered in
    /// the kernel until their heartbeat expires, and requests routed to them are lost.
    func persist(
        _ method: String, _ body: [String: Any] = [:], timeout: Duration = .seconds(1),
        retryFor: Duration = .seconds(10)
    ) async throws -> [String: Any] {
        let payload = Array(try JSONSerialization.data(withJSONObject: body))
        let deadline = ContinuousClock.now + retryFor
        let caller = client(name: "persist-caller")
        while true {
            do {
                let reply = try await caller.call("persist", method, payload: payload, timeout: timeout)
                if reply.status == 503, ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(20))
                    continue
                }
                guard Status.isSuccess(reply.status) else {
                    throw BusError.reply(status: reply.status, code: reply.errorBody.code, message: reply.errorBody.message)
                }
                guard let object = try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any] else {
                    throw HarnessError("persist.\(method) answered something that is not a JSON object")
                }
                return object
            } catch BusError.timeout(let service, let method, let seconds) {
                if ContinuousClock.now >= deadline { throw BusError.timeout(service: service, method: method, seconds: seconds) }
            }
        }
    }

    /// Every stored event of `topic` (all pages, oldest first).
    func persistHistory(_ topic: String, _ filters: [String: Any] = [:]) async throws -> [[String: Any]] {
        var events: [[String: Any]] = []
        var cursor: Any?
        repeat {
            var body = filters
            body["topic"] = topic
            body["limit"] = 1000
            if let cursor { body["cursor"] = cursor }
            let page = try await persist("history", body)
            events += page["events"] as? [[String: Any]] ?? []
            cursor = page["next_cursor"].flatMap { $0 is NSNull ? nil : $0 }
        } while cursor != nil
        return events
    }

    /// The snapshot `persist` holds for `topic` (nil on 404).
    func persistRestore(_ topic: String) async throws -> [String: Any]? {
        do {
            return try await persist("restore", ["topic": topic])
        } catch BusError.reply(let status, _, _) where status == 404 {
            return nil
        }
    }

    /// Stops `current` (the running kernel) with SIGKILL and starts a new one on the same
    /// endpoints: the kernel's retained values are gone; services reconnect. Returns the new
    /// kernel (stopped by ``shutdown()`` like every spawned process).
    func restartKernel(_ current: TestProcess) async throws -> TestProcess {
        current.signal(SIGKILL)
        guard await current.waitForExit(timeout: .seconds(5)) != nil else { throw HarnessError("the kernel did not exit on SIGKILL") }
        var arguments = ["kernel", "--kernel", kernelURL] + kernelArguments
        if let keys { arguments += ["--keys", keys.path] }
        let replacement = try spawn(Binaries.busctl, arguments, name: "kernel")
        let probe = client(name: "probe")
        let up = await eventually(timeout: .seconds(10)) {
            (try? await probe.call("bus", "ping", timeout: .milliseconds(300)))?.status == 200 || !replacement.isRunning
        }
        guard up, replacement.isRunning else { throw HarnessError("the replacement kernel did not start; stderr:\n\(replacement.stderr)") }
        return replacement
    }

    /// SIGKILLs `process`, a service instance, and waits until the kernel no longer lists it
    /// (its heartbeat expired), so no request is routed to the dead instance.
    func kill(_ process: TestProcess, service: String) async throws {
        let pid = Int(process.pid)
        process.signal(SIGKILL)
        guard await process.waitForExit(timeout: .seconds(5)) != nil else { throw HarnessError("\(service) did not exit on SIGKILL") }
        let gone = await eventually(timeout: .seconds(10), every: .milliseconds(100)) {
            ((try? await self.instances(of: service)) ?? []).allSatisfy { $0.pid != pid }
        }
        guard gone else { throw HarnessError("the kernel still lists the killed \(service) (pid \(pid))") }
    }
}

/// The `seq` and decoded `value` of a stored event object.
func storedCounter(_ object: [String: Any]?) -> (seq: UInt64, value: Int)? {
    guard let object, let seq = (object["seq"] as? NSNumber)?.uint64Value,
        let payload = object["payload"] as? [String: Any], let value = (payload["value"] as? NSNumber)?.intValue
    else { return nil }
    return (seq, value)
}

/// Collects what `persist.committed` acknowledged, per topic, for one publisher instance.
final class AckLog: Sendable {
    private let acked = Locked<[String: Set<UInt64>]>([:])
    private let task: Task<Void, Never>

    init(_ subscription: BusSubscription, instance: String) {
        let acked = self.acked
        task = Task {
            for await event in subscription where event.topic == "persist.committed" {
                guard let object = try? JSONSerialization.jsonObject(with: Data(event.payload)) as? [String: Any],
                    let topics = object["topics"] as? [[String: Any]]
                else { continue }
                acked.withLock { map in
                    for entry in topics where entry["instance"] as? String == instance {
                        guard let topic = entry["topic"] as? String, let ranges = entry["ranges"] as? [[NSNumber]] else { continue }
                        for range in ranges where range.count == 2 {
                            for seq in range[0].uint64Value...range[1].uint64Value { map[topic, default: []].insert(seq) }
                        }
                    }
                }
            }
        }
    }

    var count: Int { acked.withLock { $0.values.reduce(0) { $0 + $1.count } } }
    func seqs(_ topic: String) -> Set<UInt64> { acked.withLock { $0[topic] ?? [] } }
    func stop() { task.cancel() }
}
