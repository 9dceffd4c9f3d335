import BusSupport
import BusWire
import Foundation

/// How a process connects to the bus.
public struct BusOptions: Sendable {
    /// The kernel's endpoints.
    public var endpoints: Endpoints
    /// The service name this process publishes as (the `source` of its events).
    public var name: String
    /// This process's instance id (default: `<name>-<host>-<pid>-<random>`).
    public var instance: String
    /// The version reported in `bus.services`.
    public var version: String
    /// Default request deadline.
    public var requestTimeout: Duration = .seconds(5)
    /// MDP heartbeat interval and liveness for workers (match the kernel's). The interval
    /// defaults to `BUS_HEARTBEAT_MS` when set, as the kernel's `--heartbeat-ms` does, so one
    /// variable changes it for every process of a deployment.
    public var heartbeat: Duration = BusOptions.environmentHeartbeat ?? .milliseconds(1000)
    public var liveness = 3
    /// Events buffered per subscription. When one is full, the process stops reading events
    /// (they wait in the kernel, which holds its publishers in turn) for up to
    /// ``subscriberGrace``; past it, newer events are dropped for the full subscriptions and
    /// reported as a gap. `observe` streams drop at once instead (they keep the newest value
    /// and heal a gap by fetching it).
    public var subscriptionBuffer = 10_000
    /// How long a full subscription buffer may hold up the process's event intake (every
    /// subscription of this client waits with it) before it drops instead; after that, full
    /// buffers drop at once for 10 s. Zero: never hold. The kernel applies the same rule to
    /// each subscriber's queue (`busctl kernel --subscriber-grace-ms`).
    public var subscriberGrace: Duration = .milliseconds(100)
    /// After a grace ran out, how long full buffers (and, in the kernel, full subscriber
    /// queues) drop at once instead of holding.
    public static let subscriberLossyWindow = KernelContract.subscriberLossyWindow
    /// Largest payload sent: the kernel disconnects a peer whose frame exceeds its
    /// `--max-message-bytes` without any error, so the library refuses bigger payloads itself.
    public var maxPayloadBytes = 1 << 20
    /// CURVE credentials (own key pair, the kernel's public key); nil without security.
    public var security: ClientSecurity?
    public var logger: Logger

    public init(endpoints: Endpoints, name: String, instance: String? = nil, version: String = BusVersion.current) {
        self.endpoints = endpoints
        self.name = name
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let pid = ProcessInfo.processInfo.processIdentifier
        self.instance = instance ?? "\(name)-\(host)-\(pid)-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        self.version = version
        self.logger = Logger(label: name)
    }
}

extension BusOptions {
    /// The MDP heartbeat intervals accepted, in milliseconds.
    public static let heartbeatRangeMs = 10...60_000

    /// The MDP heartbeat interval from `BUS_HEARTBEAT_MS`, or nil when unset. An invalid value
    /// is ignored here; `busctl kernel` refuses it with a usage error.
    public static var environmentHeartbeat: Duration? {
        guard let text = ProcessInfo.processInfo.environment["BUS_HEARTBEAT_MS"], let ms = Int(text), heartbeatRangeMs.contains(ms)
        else { return nil }
        return .milliseconds(ms)
    }
}

/// The project's version, reported by services and busctl.
public enum BusVersion {
    public static let current = "0.1.0"
    /// The event meta version and request/reply body format this library speaks.
    public static let protocolVersion = Int(EventMeta.version)
}
