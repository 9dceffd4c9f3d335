import Bus
import Foundation
import Testing

/// A kernel started as a real `busctl kernel` process on free loopback ports, plus helpers to
/// start services and clients against it. Everything started is stopped by ``shutdown()``.
final class Harness: @unchecked Sendable {
    // @unchecked: `processes` and `clients` are Mutex-guarded; the rest is immutable.
    let kernelURL: String
    let endpoints: Endpoints
    private(set) var kernel: TestProcess!
    private let processes = Locked<[TestProcess]>([])
    private let clients = Locked<[BusClient]>([])
    let kernelArguments: [String]

    init(kernelArguments: [String] = []) throws {
        let port = FreePorts.kernelBase()
        kernelURL = "tcp://127.0.0.1:\(port)"
        endpoints = try Endpoints(kernel: kernelURL)
        self.kernelArguments = kernelArguments
    }

    /// Environment that points a child process at this kernel.
    var environment: [String: String] { ["BUS_KERNEL": kernelURL] }

    /// Starts the kernel and waits until it answers `bus.ping`.
    func startKernel() async throws {
        kernel = try TestProcess(Binaries.busctl, ["kernel", "--kernel", kernelURL] + kernelArguments, name: "kernel")
        track(kernel)
        let probe = client(name: "probe")
        let up = await eventually(timeout: .seconds(10)) {
            (try? await probe.call("bus", "ping", timeout: .milliseconds(300)))?.status == 200
        }
        guard up else { throw HarnessError("kernel did not answer within 10 s; stderr:\n\(kernel.stderr)") }
    }

    /// Runs `busctl` with arguments and returns when it exits.
    func busctl(_ arguments: [String], stdin: Data? = nil, timeout: Duration = .seconds(30),
                environment extra: [String: String] = [:]) async throws -> (status: Int32, stdout: String, stderr: String) {
        var env = environment
        for (k, v) in extra { env[k] = v }
        let process = try TestProcess(Binaries.busctl, arguments, name: "busctl", environment: env, stdin: stdin)
        track(process)
        guard let status = await process.waitForExit(timeout: timeout) else {
            await process.stop()
            throw HarnessError("busctl \(arguments.joined(separator: " ")) did not exit within \(timeout)")
        }
        return (status, process.stdout, process.stderr)
    }

    /// Starts a long-running process (a service, `busctl monitor`, ...).
    func spawn(_ executable: String, _ arguments: [String], name: String? = nil, environment extra: [String: String] = [:]) throws -> TestProcess {
        var env = environment
        for (k, v) in extra { env[k] = v }
        let process = try TestProcess(executable, arguments, name: name, environment: env)
        track(process)
        return process
    }

    /// Starts the fixture service and waits until the kernel lists it.
    @discardableResult
    func startTestService(name: String = "testsvc", arguments: [String] = []) async throws -> TestProcess {
        let before = try await instances(of: name)
        let process = try spawn(Binaries.testService, ["--name", name] + arguments, name: name)
        let registered = await eventually {
            ((try? await self.instances(of: name)) ?? []).count > before.count || !process.isRunning
        }
        guard registered, process.isRunning else {
            throw HarnessError("\(name) did not register; stderr:\n\(process.stderr)")
        }
        return process
    }

    /// The instances of `service` the kernel lists now.
    func instances(of service: String) async throws -> [ServiceSnapshot.Instance] {
        let services = try await client(name: "probe").services(timeout: .seconds(2))
        return services.first { $0.service == service }?.instances ?? []
    }

    /// A `BusClient` in the test process, closed by ``shutdown()``.
    func client(name: String = "test") -> BusClient {
        if let existing = clients.withLock({ $0.first { $0.name == name } }) { return existing }
        var options = BusOptions(endpoints: endpoints, name: name)
        options.logger = Logger(label: "test.\(name)", level: .warning)
        let client = BusClient(options: options)
        clients.withLock { $0.append(client) }
        return client
    }

    func track(_ process: TestProcess) {
        processes.withLock { $0.append(process) }
    }

    /// Stops every process (services before the kernel) and closes every client.
    func shutdown() async {
        for client in clients.withLock({ $0 }) { await client.close() }
        let all = processes.withLock { $0 }
        for process in all.reversed() where process !== kernel { await process.stop() }
        await kernel?.stop()
    }

    /// Runs `body` with a started harness and always shuts it down.
    static func with(kernelArguments: [String] = [], _ body: (Harness) async throws -> Void) async throws {
        let harness = try Harness(kernelArguments: kernelArguments)
        do {
            try await harness.startKernel()
            try await body(harness)
        } catch {
            await harness.shutdown()
            throw error
        }
        await harness.shutdown()
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
