import Bus
import BusTestSupport
import Foundation

/// The bus spread over three hosts (network namespaces): the kernel on host 1 listening on its
/// own address, `persist` and `auth` on host 2, the domain services, their local upstream
/// servers and `busctl` on host 3. CURVE is always on, with the keys laid out as on real
/// machines: the kernel's host holds its key pair and every admitted public key
/// (`authorized/`), each other host the kernel's public key and its own processes' pairs.
/// ``shutdown()`` stops every process (services before the kernel), deletes the namespaces and
/// the temporary folder.
final class MultiHostCluster: @unchecked Sendable {
    // @unchecked: `processes` is Mutex-guarded; the rest is immutable.
    let net: NetworkNamespaces
    let folder: URL
    private let processes = Locked<[TestProcess]>([])
    private let kernelProcess = Locked<TestProcess?>(nil)

    static let kernelHost = 1
    static let storageHost = 2
    static let appHost = 3
    /// Who runs where: the identities each host holds a key pair for.
    static let identities = [storageHost: ["persist", "auth"], appHost: ["weather", "events", "feed", "busctl"]]

    var kernelURL: String { "tcp://\(net.address(Self.kernelHost)):5555" }

    init(net: NetworkNamespaces) throws {
        self.net = net
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("bus-multihost-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try makeKeys()
    }

    /// Host `n`'s keys folder (`--keys`, `BUS_KEYS`).
    func keys(_ host: Int) -> URL { folder.appendingPathComponent("h\(host)/keys") }

    /// A service's state folder on its host.
    func state(_ service: String) -> URL { folder.appendingPathComponent("state/\(service)") }

    private func makeKeys() throws {
        for host in 1...3 {
            try FileManager.default.createDirectory(at: keys(host), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let kernel = try CurveKeyPair.generate()
        try kernel.write(name: "kernel", to: keys(Self.kernelHost))
        let authorized = keys(Self.kernelHost).appendingPathComponent("authorized")
        for (host, names) in Self.identities {
            try CurveKeyPair(publicKey: kernel.publicKey, secretKey: nil).write(name: "kernel", to: keys(host))
            for name in names {
                let pair = try CurveKeyPair.generate()
                try pair.write(name: name, to: keys(host))
                try CurveKeyPair(publicKey: pair.publicKey, secretKey: nil).write(name: name, to: authorized)
            }
        }
    }

    /// Starts `executable` inside `host`'s namespace, pointed at the kernel with the host's keys.
    func spawn(_ host: Int, _ executable: String, _ arguments: [String], name: String, environment: [String: String] = [:]) throws -> TestProcess {
        var env = ["BUS_KERNEL": kernelURL, "BUS_KEYS": keys(host).path]
        for (key, value) in environment { env[key] = value }
        let command = net.inside(host, executable, arguments)
        let process = try TestProcess(command.executable, command.arguments, name: name, environment: env)
        processes.withLock { $0.append(process) }
        return process
    }

    /// Starts `busctl kernel` on host 1, bound to host 1's address only.
    func startKernel() throws {
        let kernel = try spawn(
            Self.kernelHost, Binaries.busctl, ["kernel", "--kernel", kernelURL, "--keys", keys(Self.kernelHost).path], name: "kernel")
        kernelProcess.withLock { $0 = kernel }
    }

    /// What a `busctl` run on host 3 printed.
    struct Run: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
        var ok: Bool { status == 0 }
    }

    /// Runs `busctl` on host 3 (identity `busctl`) and returns when it exits.
    func busctl(_ arguments: [String], stdin: Data? = nil, timeout: Duration = .seconds(30)) async throws -> Run {
        let command = net.inside(Self.appHost, Binaries.busctl, arguments)
        let env = ["BUS_KERNEL": kernelURL, "BUS_KEYS": keys(Self.appHost).path, "BUS_LOG_LEVEL": "warning"]
        let process = try TestProcess(command.executable, command.arguments, name: "busctl", environment: env, stdin: stdin)
        guard let status = await process.waitForExit(timeout: timeout) else {
            await process.stop(grace: .milliseconds(500))
            throw HarnessError("busctl \(arguments.joined(separator: " ")) did not exit within \(timeout); stderr:\n\(process.stderr)")
        }
        return Run(status: status, stdout: process.stdout, stderr: process.stderr)
    }

    /// Calls `service.method` through busctl on host 3 and decodes the reply; throws with
    /// busctl's message when it fails.
    func call<T: Decodable>(_ service: String, _ method: String, _ body: String = "{}", as type: T.Type = T.self, timeout: Int = 10) async throws -> T
    {
        let run = try await busctl(["call", service, method, "-", "--timeout", "\(timeout)"], stdin: Data(body.utf8))
        guard run.ok else { throw HarnessError("busctl call \(service) \(method) exited \(run.status): \(run.stderr)") }
        return try JSONDecoder().decode(T.self, from: Data(run.stdout.utf8))
    }

    /// The services `busctl services --json` on host 3 lists with a ready instance (registered,
    /// heartbeat not late, not draining); nil when busctl failed.
    func readyServices(timeout: Int = 2) async -> Set<String>? {
        guard let run = try? await busctl(["services", "--json", "--connect-timeout", "\(timeout)"]), run.ok,
            let listing = try? JSONDecoder().decode(ServiceListing.self, from: Data(run.stdout.utf8))
        else { return nil }
        let ready = listing.services.filter { service in service.instances.contains { !$0.draining && $0.late != true } }
        return Set(ready.map(\.service))
    }

    struct ServiceListing: Decodable {
        var services: [ServiceSnapshot]
    }

    /// The pid of the running process started as `name`.
    func pid(of name: String) -> Int32? {
        processes.withLock { $0 }.last { $0.name == name && $0.isRunning }?.pid
    }

    /// The kernel ports (requests, events in, events out) each process on `host` has an
    /// established TCP connection to, by pid: `ss` inside the host's namespace. Nil when `ss`
    /// failed.
    func kernelConnections(on host: Int) async -> [Int32: Set<Int>]? {
        let command = net.inside(host, "ss", ["-tnpH", "state", "established"])
        guard let listing = try? await NetworkNamespaces.run(command.executable, command.arguments) else { return nil }
        let kernel = net.address(Self.kernelHost)
        var connections: [Int32: Set<Int>] = [:]
        for line in listing.split(separator: "\n") {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count >= 5, columns[3].hasPrefix("\(kernel):"), let port = Int(columns[3].split(separator: ":").last ?? "") else {
                continue
            }
            for pid in columns[4].split(separator: ",").filter({ $0.hasPrefix("pid=") }).compactMap({ Int32($0.dropFirst(4)) }) {
                connections[pid, default: []].insert(port)
            }
        }
        return connections
    }

    /// Starts a Tests/interop HTTP server on host 3's loopback and returns its port.
    func startUpstream(_ script: String, _ arguments: [String]) async throws -> Int {
        let path = Binaries.packageRoot.appendingPathComponent("Tests/interop/\(script)").path
        let process = try spawn(Self.appHost, Binaries.python, [path] + arguments, name: script)
        var port: Int?
        _ = await eventually(timeout: .seconds(20)) {
            port = process.stdout.split(separator: "\n").first { $0.hasPrefix("PORT ") }.flatMap { Int($0.dropFirst(5)) }
            return port != nil || !process.isRunning
        }
        guard let port else { throw HarnessError("\(script) did not start; stderr:\n\(process.stderr)") }
        return port
    }

    /// The standard error of every process that exited, for a failure message.
    var exitedProcesses: String {
        processes.withLock { $0 }.filter { !$0.isRunning }.map { "\($0.name) (exit \($0.exitStatus ?? -1)):\n\($0.stderr.suffix(2000))" }
            .joined(separator: "\n")
    }

    /// Stops every process (services before the kernel), then deletes the namespaces and files.
    func shutdown() async {
        let kernel = kernelProcess.withLock { $0 }
        for process in processes.withLock({ $0 }).reversed() where process !== kernel { await process.stop() }
        await kernel?.stop()
        await net.remove()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Makes the namespaces and the cluster, runs `body`, and always cleans up.
    static func with(_ body: (MultiHostCluster) async throws -> Void) async throws {
        let net = try await NetworkNamespaces.create(hosts: 3)
        let cluster: MultiHostCluster
        do {
            cluster = try MultiHostCluster(net: net)
        } catch {
            await net.remove()
            throw error
        }
        do {
            try await body(cluster)
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    }
}
