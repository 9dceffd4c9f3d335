import BusTestSupport
import Foundation
import Testing

@testable import Bus
@testable import BusWire
@testable import BusZMQ

/// Host names in `tcp://` endpoints are looked up by the client, outside libzmq's I/O thread
/// (the whole path, with a resolver that stops answering, is in the integration tests'
/// `KernelHostNameTests`).
struct HostLookupTests {
    @Test func endpointsWithAHostName_areTheOnesLookedUp() throws {
        let named = try #require(NamedTCPEndpoint("tcp://kernel:5555"))
        #expect(named.host == "kernel")
        #expect(named.port == 5555)
        #expect(named.endpoint(address: "10.0.0.7") == "tcp://10.0.0.7:5555")
        #expect(NamedTCPEndpoint("tcp://kernel.example.test:7")?.host == "kernel.example.test")
        for endpoint in [
            "tcp://127.0.0.1:5555", "tcp://10.1.2.3:5555", "tcp://[::1]:5555", "tcp://*:5555", "tcp://10.0.0.1;kernel:5555",
            "tcp://kernel", "tcp://:5555", "tcp://kernel:", "tcp://kernel:http", "tcp://kernel:0", "tcp://kernel:70000", "tcp://::1:5555",
            "ipc:///tmp/bus.sock", "inproc://kernel",
        ] {
            #expect(NamedTCPEndpoint(endpoint) == nil, "\(endpoint)")
        }
    }

    @Test func anAddress_resolvesToItself() throws {
        #expect(HostLookup.isIPv4("192.168.1.20"))
        #expect(!HostLookup.isIPv4("kernel"))
        #expect(!HostLookup.isIPv4("1.2.3"))
        #expect(try HostLookup.ipv4("127.0.0.1").get() == ["127.0.0.1"])
    }

    @Test func aFailedLookup_saysWhichNameAndWhy() {
        let failure = LookupFailure(host: "kernel", reason: "Name or service not known")
        #expect(failure.description == "cannot resolve 'kernel': Name or service not known")
    }

    /// `localhost` from `/etc/hosts` only: no query leaves the machine.
    static let hostsFileHasLocalhost: Bool = {
        let hosts = (try? String(contentsOfFile: "/etc/hosts", encoding: .utf8)) ?? ""
        return hosts.split(separator: "\n").contains { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            return fields.first == "127.0.0.1" && fields.dropFirst().contains("localhost")
        }
    }()

    @Test(.enabled(if: hostsFileHasLocalhost, "needs localhost as 127.0.0.1 in /etc/hosts"))
    func aClientGivenAHostName_sendsToTheAddressItResolvesTo() async throws {
        let port = try #require(FreePorts.kernelBase())
        let endpoints = Endpoints(
            requests: "tcp://localhost:\(port)", eventsIn: "tcp://localhost:\(port + 1)", eventsOut: "tcp://localhost:\(port + 2)")
        let context = ZMQContext(ioThreads: 1)
        defer { context.terminate() }
        let router = try ZMQSocket(context, .router, tuning: .default)
        defer { router.close() }
        try router.bind("tcp://127.0.0.1:\(port)")
        let client = BusClient(options: BusOptions(endpoints: endpoints, name: "t"))
        let call = Task { try? await client.call("svc", "named", timeout: .seconds(20)) }
        var received = false
        let arrived = try await eventually(timeout: .seconds(15)) {
            while let frames = try router.receive(dontWait: true) {
                if String(decoding: frames.flatMap({ $0 }), as: UTF8.self).contains("named") { received = true }
            }
            return received
        }
        call.cancel()
        await client.close()
        #expect(arrived, "the request never reached the ROUTER on 127.0.0.1")
    }
}
