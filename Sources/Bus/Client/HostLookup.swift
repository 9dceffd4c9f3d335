import BusSupport
import BusWire
import Foundation

/// A `tcp://HOST:PORT` endpoint whose HOST is a name. libzmq resolves such a name on its own I/O
/// thread, at every connect and at every reconnect: a lookup that hangs (a container network's
/// DNS that does not answer) stops every socket of the process, heartbeats included. The client
/// resolves these names itself, on a thread of their own (``HostLookup``), and hands libzmq the
/// address.
struct NamedTCPEndpoint: Hashable, Sendable {
    let host: String
    let port: Int

    /// Nil when libzmq needs no lookup to connect to `endpoint`, or when it is left to libzmq
    /// (which then reports what is wrong with it, or looks it up itself): another transport, an
    /// IPv4 address, an IPv6 address, the `*` wildcard, a port that is not a number from 1 to
    /// 65535, or the source-address form `tcp://SOURCE;HOST:PORT`.
    init?(_ endpoint: String) {
        guard let (host, port) = Endpoints.tcpHostPort(endpoint), !host.contains(";"), !host.contains(":"), !host.hasPrefix("["),
            host != "*", !HostLookup.isIPv4(String(host))
        else { return nil }
        self.host = String(host)
        self.port = port
    }

    /// The endpoint with the host replaced by `address`.
    func endpoint(address: String) -> String { "tcp://\(address):\(port)" }
}

/// Host-name lookups for the client's sockets, outside libzmq.
enum HostLookup {
    /// True for a dotted-quad IPv4 address.
    static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    /// The IPv4 addresses of `host`, in the resolver's order, or why there are none. Only IPv4:
    /// libzmq's sockets without `ZMQ_IPV6` (the bus's) ask for no other family either. Blocks
    /// for as long as the system's resolver takes (`timeout × attempts` of `resolv.conf` when
    /// its servers do not answer): call it on a thread of its own, never on an I/O thread or
    /// the cooperative pool (``start(_:name:done:)``).
    static func ipv4(_ host: String) -> Result<[String], LookupFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            return .failure(LookupFailure(host: host, reason: reason))
        }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry = list
        while let current = entry {
            if current.pointee.ai_family == AF_INET, let address = current.pointee.ai_addr {
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                    var raw = inet.pointee.sin_addr
                    return inet_ntop(AF_INET, &raw, &text, socklen_t(INET_ADDRSTRLEN)) != nil
                }
                if ok {
                    let string = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    if !addresses.contains(string) { addresses.append(string) }
                }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { return .failure(LookupFailure(host: host, reason: "no IPv4 address")) }
        return .success(addresses)
    }

    /// Looks `host` up on a new thread named `bus.dns.<name>` and hands the result to `done`
    /// on that thread. A lookup that hangs holds only that thread.
    static func start(_ host: String, name: String, done: @escaping @Sendable (Result<[String], LookupFailure>) -> Void) {
        Thread.startNamed("bus.dns.\(name)") { done(ipv4(host)) }
    }
}

/// Why a host name gave no address.
struct LookupFailure: Error, Sendable, Equatable, CustomStringConvertible {
    let host: String
    let reason: String
    var description: String { "cannot resolve '\(host)': \(reason)" }
}
