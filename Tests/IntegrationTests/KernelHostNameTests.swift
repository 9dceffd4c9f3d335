import Bus
import BusTestSupport
import Foundation
import Testing

/// A service that finds the kernel by host name, on a host whose DNS server stops answering and
/// later says the kernel moved. Three network namespaces: the kernel on host 1 (later on host
/// 3), the service on host 2 with its own `resolv.conf` (`/etc/netns/<host 2>/`, which `ip
/// netns exec` mounts over `/etc/resolv.conf`) pointing at `Tests/interop/dns_server.py` on
/// host 2's loopback. A lookup that gets no answer takes 20 s there (`timeout:10 attempts:2`).
@Suite(.serialized)
struct KernelHostNameTests {
    static let name = "kernel.swiftbus.test"
    static let underSanitizer = TestProcess.underSanitizer
    /// Well under one unanswered lookup (20 s): libzmq resolving the name on its I/O thread
    /// would hold every socket of the service that long.
    static let limit: Duration = underSanitizer ? .seconds(30) : .seconds(8)

    @Test(
        .enabled(if: NetworkNamespaces.unavailableReason == nil, "needs root and iproute2's `ip`: the hosts are network namespaces"),
        .enabled(if: NetworkNamespaces.resolverUnavailableReason == nil, "nscd runs: the host's own resolver would be bypassed"))
    func resolverSilent_serviceKeepsServingAndReconnects_thenFollowsTheKernelToItsNewAddress() async throws {
        let net = try await NetworkNamespaces.create(hosts: 3)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bus-dns-\(UUID().uuidString)")
        var processes: [TestProcess] = []
        defer {
            for process in processes { process.signal(SIGKILL) }
            try? FileManager.default.removeItem(at: folder)
        }
        let answerFile = folder.appendingPathComponent("answer")
        func answer(_ text: String) throws { try text.write(to: answerFile, atomically: true, encoding: .utf8) }

        func spawn(
            _ host: Int, _ executable: String, _ arguments: [String], name: String, environment: [String: String] = [:]
        ) throws
            -> TestProcess
        {
            let command = net.inside(host, executable, arguments)
            let process = try TestProcess(command.executable, command.arguments, name: name, environment: environment)
            processes.append(process)
            return process
        }
        func startKernel(on host: Int) throws -> TestProcess {
            try spawn(host, Binaries.busctl, ["kernel", "--kernel", "tcp://\(net.address(host)):5555"], name: "kernel-h\(host)")
        }
        /// Runs busctl on `host` against the kernel there, by address; nil when it failed.
        func busctl(_ arguments: [String], on host: Int) async -> String? {
            let command = net.inside(host, Binaries.busctl, arguments)
            guard
                let process = try? TestProcess(
                    command.executable, command.arguments, name: "busctl", environment: ["BUS_KERNEL": "tcp://\(net.address(host)):5555"])
            else { return nil }
            return await process.waitForExit(timeout: .seconds(30)) == 0 ? process.stdout : nil
        }
        /// Calls the service through the kernel on `host`.
        func call(_ method: String, _ body: String = "{}", on host: Int) async -> Bool {
            await busctl(["call", "dnssvc", method, body, "--timeout", "2"], on: host) != nil
        }

        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try net.setResolver(2, resolvConf: "nameserver 127.0.0.1\noptions timeout:10 attempts:2\n")
            try answer(net.address(1))
            let dns = try spawn(
                2, Binaries.python, [Binaries.packageRoot.appendingPathComponent("Tests/interop/dns_server.py").path, Self.name, answerFile.path],
                name: "dns")
            #expect(await eventually(timeout: .seconds(20)) { dns.stdout.contains("READY") || !dns.isRunning }, "\(dns.stderr)")
            var kernel = try startKernel(on: 1)
            let service = try spawn(
                2, Binaries.testService, ["--name", "dnssvc"], name: "dnssvc", environment: ["BUS_KERNEL": "tcp://\(Self.name):5555"])
            #expect(await eventually(timeout: .seconds(30)) { await call("whoami", on: 1) }, "the service never answered: \(service.stderr)")

            // The resolver stops answering. `set` publishes, and the service opens its publisher
            // socket only now: towards the address it has, with no lookup, so the reply comes.
            try answer("silent")
            #expect(await call("set", #"{"value": 1}"#, on: 1), "set failed while the resolver was silent: \(service.stderr.suffix(2000))")

            // The kernel restarts at the same address: every socket reconnects without a lookup.
            kernel.signal(SIGKILL)
            _ = await kernel.waitForExit(timeout: .seconds(5))
            let restarted = ContinuousClock.now
            kernel = try startKernel(on: 1)
            #expect(
                await eventually(timeout: Self.limit) { await call("whoami", on: 1) },
                "not back within \(Self.limit) of the kernel's restart: \(service.stderr.suffix(2000))")
            let back = ContinuousClock.now - restarted

            // The kernel moves to host 3 and the resolver answers again with that address: the
            // service's sockets, left without a connection, look the name up again and follow.
            try answer(net.address(3))
            await kernel.stop()
            kernel = try startKernel(on: 3)
            #expect(
                await eventually(timeout: .seconds(40)) { await call("whoami", on: 3) },
                "the service did not follow the kernel to host 3: \(service.stderr.suffix(3000))")
            // Its publisher moved too: an event published now reaches the kernel on host 3.
            #expect(await call("set", #"{"value": 2}"#, on: 3))
            #expect(
                await eventually(timeout: .seconds(10)) {
                    await busctl(["get", "dnssvc.state", "--json"], on: 3)?.replacingOccurrences(of: " ", with: "").contains(#""value":2"#) == true
                }, "dnssvc.state never reached the kernel on host 3")
            #expect(service.stderr.contains("'\(Self.name)' moved from \(net.address(1)) to \(net.address(3))"), "\(service.stderr.suffix(3000))")
            #expect(service.isRunning)
            print("back \(back) after the kernel's restart with the resolver silent")
        } catch {
            for process in processes.reversed() { await process.stop(grace: .seconds(1)) }
            await net.remove()
            throw error
        }
        for process in processes.reversed() { await process.stop(grace: .seconds(1)) }
        await net.remove()
    }
}
