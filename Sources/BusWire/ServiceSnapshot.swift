/// What `bus.services` returns for one service.
public struct ServiceSnapshot: Codable, Equatable, Sendable {
    public struct Instance: Codable, Equatable, Sendable {
        public var instance: String
        public var version: String?
        public var host: String?
        public var pid: Int?
        /// Worker connections this instance registered (its concurrency).
        public var workers: Int
        public var uptimeMs: Int64
        /// Milliseconds since the kernel last heard from the instance.
        public var heartbeatAgeMs: Int64
        public var handled: Int
        public var inFlight: Int
        public var failed: Int
        public var draining: Bool
        /// True when its workers read one-frame request bodies (READY `"one_frame": true`).
        public var oneFrame: Bool?
        /// True when its workers read binary request meta (READY `"binary_meta": true`).
        public var binaryMeta: Bool?
        /// True when its heartbeat is late: nothing heard for more than one and a half heartbeat
        /// intervals (a frozen or overloaded process, not yet expired). Absent otherwise.
        public var late: Bool?

        package init(
            instance: String, version: String?, host: String?, pid: Int?, workers: Int, uptimeMs: Int64, heartbeatAgeMs: Int64,
            handled: Int, inFlight: Int, failed: Int, draining: Bool, oneFrame: Bool?, binaryMeta: Bool?, late: Bool?
        ) {
            self.instance = instance
            self.version = version
            self.host = host
            self.pid = pid
            self.workers = workers
            self.uptimeMs = uptimeMs
            self.heartbeatAgeMs = heartbeatAgeMs
            self.handled = handled
            self.inFlight = inFlight
            self.failed = failed
            self.draining = draining
            self.oneFrame = oneFrame
            self.binaryMeta = binaryMeta
            self.late = late
        }

        enum CodingKeys: String, CodingKey {
            case instance, version, host, pid, workers, handled, failed, draining, late
            case oneFrame = "one_frame"
            case binaryMeta = "binary_meta"
            case uptimeMs = "uptime_ms"
            case heartbeatAgeMs = "heartbeat_age_ms"
            case inFlight = "in_flight"
        }
    }

    public var service: String
    public var instances: [Instance]
    public var queued: Int
    public var requests: Int
    public var errors: Int
    public var failed: Int
    public var p50Us: Int?
    public var p99Us: Int?

    package init(
        service: String, instances: [Instance], queued: Int, requests: Int, errors: Int, failed: Int, p50Us: Int?, p99Us: Int?
    ) {
        self.service = service
        self.instances = instances
        self.queued = queued
        self.requests = requests
        self.errors = errors
        self.failed = failed
        self.p50Us = p50Us
        self.p99Us = p99Us
    }

    enum CodingKeys: String, CodingKey {
        case service, instances, queued, requests, errors, failed
        case p50Us = "p50_us"
        case p99Us = "p99_us"
    }
}
