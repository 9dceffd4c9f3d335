import Bus
import Foundation
import Synchronization

/// The bus side of `busctl bench`: the real kernel (a `busctl kernel` child process) and
/// `Bus` clients through the public API.
enum BusPath {
    /// A kernel child process on free ports.
    final class KernelProcess {
        let process = Process()
        let endpoints: Endpoints
        let port: Int

        init(port: Int, extra: [String] = []) throws {
            self.port = port
            endpoints = try Endpoints(kernel: "tcp://127.0.0.1:\(port)")
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            process.arguments = ["kernel", "--kernel", endpoints.requests, "--log-level", "warning"] + extra
            // A bench that dies (Ctrl-C, SIGKILL) takes its kernel with it (ParentWatch).
            var environment = ProcessInfo.processInfo.environment
            environment["BUS_EXIT_WITH_PARENT"] = String(getpid())
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// Waits until the kernel answers `bus.ping`.
        func ready(_ client: BusClient) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if (try? await client.call("bus", "ping", timeout: .milliseconds(300)))?.status == 200 { return }
            }
            throw CommandFailure("the benchmark kernel did not start")
        }

        /// Resident set size in bytes (from /proc).
        var rss: Int {
            guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                let kb = Int(line.split(separator: " ").dropFirst().first ?? "")
            else { return 0 }
            return kb * 1024
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// How many events each subscriber should get: unknown (`Int.max`) until publishing ends.
    final class Expected: Sendable {
        let count = Atomic<Int>(.max)
    }

    static func client(_ endpoints: Endpoints, name: String, buffer: Int = 100_000) -> BusClient {
        var options = BusOptions(endpoints: endpoints, name: name)
        options.logger = Logger(label: name, level: .error)
        options.subscriptionBuffer = buffer
        return BusClient(options: options)
    }

    /// A `Bus` publisher -> kernel -> `subscribers` `Bus` subscribers. Messages/s delivered in
    /// total (the sum of each subscriber's rate), and events lost (seen as gaps or never seen).
    static func pubsub(
        size: Int, seconds: Double, subscribers: Int, port: Int, execution: BusService.Execution
    ) async throws -> (rate: Double, lost: Int) {
        let kernel = try KernelProcess(port: port)
        defer { kernel.stop() }
        let publisher = client(kernel.endpoints, name: "bench")
        try await kernel.ready(publisher)
        var clients: [BusClient] = []
        var tasks: [Task<(Int, UInt64, UInt64), Never>] = []
        // Each subscriber ends once it has every event sent (known when publishing ends), or
        // when cancelled after its progress stalls (events lost).
        let expected = Expected()
        let progress = Locked([Int](repeating: 0, count: subscribers))
        for index in 0..<subscribers {
            let sub = client(kernel.endpoints, name: "benchsub\(index)")
            clients.append(sub)
            let subscription = try sub.subscribe("bench.>")
            try await subscription.confirm()
            tasks.append(
                Task(executorPreference: execution == .ioThread ? sub.taskExecutor : nil) {
                    var received = 0
                    var first: UInt64 = 0
                    var last: UInt64 = 0
                    for await event in subscription where event.topic == "bench.t" {
                        received += 1
                        last = WallClock.nanos()
                        if first == 0 { first = last }
                        if received & 1023 == 0 { progress.withLock { $0[index] = received } }
                        if received >= expected.count.load(ordering: .relaxed) { break }
                    }
                    progress.withLock { $0[index] = received }
                    return (received, first, last)
                })
        }
        let payload = [UInt8](repeating: 0x61, count: size)
        let end = WallClock.nanos() + UInt64(seconds * 1e9)
        var sent = 0
        while WallClock.nanos() < end {
            for _ in 0..<256 {
                try await publisher.publish("bench.t", payload: payload)
                sent += 1
            }
        }
        // Drain: until every subscriber has everything, or nobody made progress for 500 ms.
        expected.count.store(sent, ordering: .relaxed)
        var lastTotal = -1
        var lastChange = ContinuousClock.now
        while ContinuousClock.now - lastChange < .milliseconds(500) {
            let counts = progress.withLock { $0 }
            if counts.allSatisfy({ $0 >= sent }) { break }
            let total = counts.reduce(0, +)
            if total != lastTotal {
                lastTotal = total
                lastChange = .now
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        for task in tasks { task.cancel() }
        var rate = 0.0
        var received = 0
        for (index, task) in tasks.enumerated() {
            let (count, first, last) = await task.value
            received += min(count, sent)
            if last > first { rate += Double(count) / (Double(last - first) / 1e9) }
            await clients[index].close()
        }
        await publisher.close()
        return (rate, max(0, sent * subscribers - received))
    }

    /// A `Bus` client calling a `Bus` service through the kernel, one request at a time.
    static func reqrepLatency(size: Int, seconds: Double, port: Int, execution: BusService.Execution) async throws -> [Double] {
        try await withService(port: port, execution: execution) { caller in
            let payload = [UInt8](repeating: 0x61, count: size)
            var latencies: [Double] = []
            let end = WallClock.nanos() + UInt64(seconds * 1e9)
            while WallClock.nanos() < end {
                let t0 = WallClock.nanos()
                let reply = try await caller.call("benchsvc", "echo", payload: payload, timeout: .seconds(5))
                guard reply.status == 200 else { throw CommandFailure("bench call failed: \(reply.status)") }
                latencies.append(Double(WallClock.nanos() - t0) / 1000)
            }
            return latencies
        }
    }

    /// Requests/s with `inFlight` requests outstanding.
    static func reqrepThroughput(size: Int, inFlight: Int, seconds: Double, port: Int, execution: BusService.Execution) async throws -> Double {
        try await withService(port: port, execution: execution) { caller in
            let payload = [UInt8](repeating: 0x61, count: size)
            let start = WallClock.nanos()
            let end = start + UInt64(seconds * 1e9)
            let done = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<inFlight {
                    group.addTask(executorPreference: execution == .ioThread ? caller.taskExecutor : nil) {
                        var n = 0
                        while WallClock.nanos() < end {
                            _ = try await caller.call("benchsvc", "echo", payload: payload, timeout: .seconds(10))
                            n += 1
                        }
                        return n
                    }
                }
                return try await group.reduce(0, +)
            }
            return Double(done) / (Double(WallClock.nanos() - start) / 1e9)
        }
    }

    /// Runs `body` with a caller and an echo service `benchsvc` on a fresh kernel. With
    /// `.ioThread`, the service's handlers and the caller's loop run on their clients' I/O
    /// threads (``BusClient/taskExecutor``); with `.pool`, on the cooperative pool.
    static func withService<T: Sendable>(
        port: Int, execution: BusService.Execution, _ body: @escaping @Sendable (BusClient) async throws -> T
    ) async throws -> T {
        let kernel = try KernelProcess(port: port)
        defer { kernel.stop() }
        let caller = client(kernel.endpoints, name: "benchcaller")
        try await kernel.ready(caller)
        let server = client(kernel.endpoints, name: "benchsvc")
        let service = BusService(name: "benchsvc", execution: execution)
        service.method("echo", raw: { $0.payload })
        let handle = try server.serve(service)
        // Wait until the worker is registered.
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if ((try? await caller.services()) ?? []).contains(where: { $0.service == "benchsvc" }) { break }
        }
        let result =
            execution == .ioThread
            ? try await Task(executorPreference: caller.taskExecutor) { try await body(caller) }.value
            : try await body(caller)
        await handle.drain(timeout: .milliseconds(200))
        await server.close()
        await caller.close()
        return result
    }

    /// Kernel RSS: idle, after `topics` retained topics, and the peak while a subscriber that
    /// never reads lets the kernel's queue towards it fill up (bounded by the high-water mark).
    static func memory(topics: Int, seconds: Double, port: Int) async throws -> (idle: Int, retained: Int, slowPeak: Int, slowDrops: UInt64) {
        let kernel = try KernelProcess(port: port)
        defer { kernel.stop() }
        let publisher = client(kernel.endpoints, name: "bench")
        try await kernel.ready(publisher)
        try await Task.sleep(for: .milliseconds(300))
        let idle = kernel.rss
        let payload = [UInt8](repeating: 0x61, count: 64)
        for i in 0..<topics {
            try await publisher.publish("bench.retained.t\(i)", payload: payload, retain: true)
        }
        // Wait until the kernel holds them all: publishes are in order, so the last one is enough.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if (try? await publisher.retained("bench.retained.t\(topics - 1)")) != nil { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .milliseconds(300))
        let retained = kernel.rss
        // A subscriber that never reads: a SUB connected and subscribed, never drained.
        let slow = client(kernel.endpoints, name: "slow", buffer: 1)
        let subscription = try slow.subscribe("bench.flood")
        try await subscription.confirm()
        var peak = kernel.rss
        let end = WallClock.nanos() + UInt64(seconds * 1e9)
        let big = [UInt8](repeating: 0x62, count: 1024)
        var n = 0
        while WallClock.nanos() < end {
            try await publisher.publish("bench.flood", payload: big)
            n += 1
            if n % 5000 == 0 { peak = max(peak, kernel.rss) }
        }
        peak = max(peak, kernel.rss)
        // What the slow subscriber lost shows as gaps when it finally reads.
        var missed: UInt64 = 0
        var seen = 0
        let reader = Task {
            for await event in subscription {
                missed += event.missed
                seen += 1
            }
            return (missed, seen)
        }
        try await Task.sleep(for: .milliseconds(500))
        reader.cancel()
        let (drops, _) = await reader.value
        await slow.close()
        await publisher.close()
        return (idle, retained, peak, drops)
    }
}
