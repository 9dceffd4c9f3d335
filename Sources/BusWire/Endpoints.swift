import Foundation

/// The three endpoints of a kernel. `--kernel tcp://HOST:PORT` (env `BUS_KERNEL`, default
/// `tcp://127.0.0.1:5555`) names the request plane; events-in and events-out are PORT+1 and
/// PORT+2 unless given explicitly.
public struct Endpoints: Equatable, Sendable, CustomStringConvertible {
    /// ROUTER: Majordomo requests (clients and workers connect).
    public var requests: String
    /// XSUB: publishers connect their PUB sockets here.
    public var eventsIn: String
    /// XPUB: subscribers connect their SUB sockets here.
    public var eventsOut: String

    public static let defaultKernel = "tcp://127.0.0.1:5555"

    public init(requests: String, eventsIn: String, eventsOut: String) {
        self.requests = requests
        self.eventsIn = eventsIn
        self.eventsOut = eventsOut
    }

    /// Derives events-in and events-out from a `tcp://HOST:PORT` kernel endpoint (PORT+1,
    /// PORT+2); other transports need both given explicitly.
    public init(kernel: String, eventsIn: String? = nil, eventsOut: String? = nil) throws(BusError) {
        self.requests = kernel
        if let eventsIn, let eventsOut {
            self.eventsIn = eventsIn
            self.eventsOut = eventsOut
            return
        }
        guard let (host, port) = Self.tcpHostPort(kernel), port <= 65533 else {
            throw .usage(
                "kernel endpoint '\(kernel)' is not tcp://HOST:PORT with a port below 65534; give --events-in and --events-out for other transports")
        }
        self.eventsIn = eventsIn ?? "tcp://\(host):\(port + 1)"
        self.eventsOut = eventsOut ?? "tcp://\(host):\(port + 2)"
    }

    /// The HOST and PORT of a `tcp://HOST:PORT` endpoint (PORT in 1...65535; HOST as written,
    /// brackets of an IPv6 address included), nil for anything else.
    package static func tcpHostPort(_ endpoint: String) -> (host: Substring, port: Int)? {
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":"),
            let port = Int(endpoint[endpoint.index(after: colon)...]), (1...65535).contains(port)
        else { return nil }
        let host = endpoint[endpoint.index(endpoint.startIndex, offsetBy: "tcp://".count)..<colon]
        return host.isEmpty ? nil : (host, port)
    }

    /// `BUS_KERNEL`, `BUS_EVENTS_IN`, `BUS_EVENTS_OUT` from the environment, with defaults.
    public static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) throws(BusError) -> Endpoints {
        try Endpoints(
            kernel: env["BUS_KERNEL"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultKernel,
            eventsIn: env["BUS_EVENTS_IN"], eventsOut: env["BUS_EVENTS_OUT"])
    }

    /// The endpoint to bind for a connect endpoint: a `tcp://localhost` host binds as
    /// `127.0.0.1`; everything else binds as given.
    package static func bindable(_ endpoint: String) -> String {
        endpoint.replacingOccurrences(of: "tcp://localhost:", with: "tcp://127.0.0.1:")
    }

    public var description: String { "requests \(requests), events in \(eventsIn), events out \(eventsOut)" }
}
