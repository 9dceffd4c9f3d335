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
        guard kernel.hasPrefix("tcp://"), let colon = kernel.lastIndex(of: ":"),
            let port = Int(kernel[kernel.index(after: colon)...]), (1...65533).contains(port)
        else {
            throw .usage(
                "kernel endpoint '\(kernel)' is not tcp://HOST:PORT with a port below 65534; give --events-in and --events-out for other transports")
        }
        let host = kernel[..<colon]
        self.eventsIn = eventsIn ?? "\(host):\(port + 1)"
        self.eventsOut = eventsOut ?? "\(host):\(port + 2)"
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
