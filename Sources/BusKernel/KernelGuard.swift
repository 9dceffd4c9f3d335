import BusSupport
import BusWire
import BusZMQ
import CZeroMQ
import Foundation

/// The kernel's security, on the kernel thread: the ZAP handler (RFC 27) that admits CURVE
/// clients whose public key is in `authorized/`, the permission checks on every message
/// (identity from the connection's ZAP User-Id, never from the message), key reloads, and the
/// reporting of failed handshakes. Fails closed: it will not exist without a working ZAP handler.
final class KernelGuard {
    static let domain = "swiftbus"
    static let zapEndpoint = "inproc://zeromq.zap.01"
    static let probePrefix = Array("bus.probe.".utf8)
    /// `bus.refill` and the one identity allowed to call it.
    static let refillSubject = "bus.refill"
    static let refillIdentity = "persist"

    let security: KernelSecurity
    let logger: Logger
    private(set) var zap: ZMQSocket?
    /// Z85 public key -> identity.
    private(set) var authorized: [String: String]
    private var compiled: [String: CompiledRules] = [:]
    private var signature: String
    private var nextWatch = MonotonicTime.now
    private var limiter = RateLimitedLog(interval: KernelGuard.logInterval)
    private(set) var monitors: [(ZMQMonitor, String)] = []
    /// Last peer address a ZAP request named, and the key it denied, for handshake reports.
    private var lastDenied: (address: String, key: String)?
    private var lastAccepted: String?
    /// Identities whose subscriptions were admitted, and identities that published, to know
    /// which endpoints a revocation must re-bind.
    private(set) var subscribers: [String: Int] = [:]
    private(set) var publishers: Set<String> = []
    private var lastUserID: [CChar] = []
    private var lastIdentity: String?
    private var publishCache: [String: [[UInt8]: Bool]] = [:]
    private var selfTesting = false

    var counters = (zapAllowed: 0, zapDenied: 0, publishDenied: 0, subscribeDenied: 0, callDenied: 0, handshakeFailures: 0)

    init(security: KernelSecurity, context: ZMQContext, logger: Logger) throws {
        self.security = security
        self.logger = logger
        authorized = try security.loadAuthorized()
        signature = security.authorizedSignature()
        if ProcessInfo.processInfo.environment["BUS_TEST_DISABLE_ZAP"] == "1" {
            // Fault injection for the test that proves the self-test fails closed.
            logger.warning("BUS_TEST_DISABLE_ZAP=1: not starting the ZAP handler")
        } else {
            let zap = try ZMQSocket(context, .rep, tuning: .default)
            do {
                try zap.bind(Self.zapEndpoint)
            } catch {
                zap.close()
                throw SecurityError.zapHandlerNotRunning("cannot bind \(Self.zapEndpoint): \(error)")
            }
            self.zap = zap
        }
        do {
            try selfTest(context: context)
        } catch {
            zap?.close()
            throw error
        }
    }

    func close() {
        for (monitor, _) in monitors { monitor.close() }
        zap?.close()
    }

    /// Proves the handler is consulted and refuses an unknown key before any endpoint is bound:
    /// a throwaway CURVE client with a random key talks to a throwaway CURVE server.
    private func selfTest(context: ZMQContext) throws {
        let server = try ZMQSocket(context, .router, tuning: .default)
        defer { server.close() }
        try server.makeCurveServer(security.keyPair, domain: Self.domain)
        try server.bind("tcp://127.0.0.1:*")
        let client = try ZMQSocket(context, .dealer, tuning: .default)
        defer { client.close() }
        let stranger = try CurveKeyPair.generate()
        try client.makeCurveClient(stranger, serverKey: security.keyPair.publicKey)
        try client.connect(server.endpoint)
        try client.send([Array("self-test".utf8)], dontWait: true)
        var poller = ZMQPoller()
        poller.add(server)
        if let zap { poller.add(zap) }
        let deadline = MonotonicTime.now + .seconds(3)
        var consulted = false
        var settle: MonotonicTime?
        selfTesting = true
        defer { selfTesting = false }
        while MonotonicTime.now < deadline {
            _ = try poller.poll(timeoutMs: 20)
            if try server.receive() != nil {
                throw SecurityError.zapHandlerNotRunning("a client with an unknown key was admitted in the self-test")
            }
            if let zap, let request = try zap.receive() {
                consulted = true
                try zap.send(answer(request))
                settle = MonotonicTime.now + .milliseconds(100)
            }
            if let settle, MonotonicTime.now >= settle { break }
        }
        guard consulted else {
            throw SecurityError.zapHandlerNotRunning("no ZAP request reached the handler in the self-test")
        }
        counters = (0, 0, 0, 0, 0, 0)
        lastDenied = nil
    }

    /// Monitors a public socket's handshakes (replacing the monitor of a re-bound one).
    func monitor(_ socket: ZMQSocket, context: ZMQContext, name: String) throws(ZMQError) {
        for (old, _) in monitors where old.socket.endpoint.contains(".\(name).") { old.close() }
        monitors.removeAll { $0.1 == name }
        monitors.append((try ZMQMonitor(context, target: socket, events: ZMQMonitor.Event.handshakeEvents, name: name), name))
    }

    // MARK: ZAP

    /// Answers every waiting ZAP request.
    func serveZAP() {
        guard let zap else { return }
        while let request = try? zap.receive() {
            _ = try? zap.send(answer(request))
        }
    }

    /// RFC 27: `[version][request id][domain][address][identity][mechanism][credentials...]`
    /// -> `[version][request id][status][text][user id][metadata]`. The user id is the
    /// client's Z85 public key; the identity is looked up per message, so removing a key
    /// revokes it at once even on open connections.
    private func answer(_ request: Frames) -> Frames {
        guard request.count >= 6, request[0] == Array("1.0".utf8) else {
            return [Array("1.0".utf8), request.count > 1 ? request[1] : [], Array("500".utf8), Array("malformed ZAP request".utf8), [], []]
        }
        let id = request[1]
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        func reply(_ status: String, _ text: String, user: String = "") -> Frames {
            [Array("1.0".utf8), id, Array(status.utf8), Array(text.utf8), Array(user.utf8), []]
        }
        guard mechanism == "CURVE", request.count >= 7, request[6].count == 32 else {
            counters.zapDenied += 1
            note("zap:mechanism", "refused a \(mechanism) client from \(address): only CURVE is accepted")
            return reply("400", "CURVE required")
        }
        let key = Z85.encode(request[6])
        guard let identity = authorized[key] else {
            counters.zapDenied += 1
            lastDenied = (address, key)
            note("zap:unknown-key", "refused unknown key \(key) from \(address) (not in \(security.authorizedDirectory.path))")
            return reply("400", "unknown key")
        }
        counters.zapAllowed += 1
        logger.debug("admitted \(identity) from \(address)")
        return reply("200", "OK", user: key)
    }

    // MARK: identities and permissions

    /// The identity of a connection from its ZAP User-Id, or nil when its key is not (or no
    /// longer) authorized.
    func identity(userID: String?) -> String? {
        guard let userID else { return nil }
        return authorized[userID]
    }

    /// The fast path's identity lookup: compares the C string with the previous one first.
    func identity(userID pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let length = strlen(pointer)
        if length == lastUserID.count, memcmp(pointer, lastUserID, length) == 0 { return lastIdentity }
        lastUserID = Array(UnsafeBufferPointer(start: pointer, count: length))
        lastIdentity = authorized[cString(lastUserID + [0])]
        return lastIdentity
    }

    func rules(_ identity: String) -> CompiledRules {
        if let rules = compiled[identity] { return rules }
        let rules = security.policy.compiled(for: identity)
        compiled[identity] = rules
        return rules
    }

    /// Whether `identity` may publish on the topic (cached per identity and topic); a refusal
    /// is counted and logged (rate-limited).
    func allowsPublish(_ identity: String?, topic: [UInt8]) -> Bool {
        var allowed = false
        if let identity {
            if topic.starts(with: Self.probePrefix) {
                // Subscription probes (BusSubscription.confirm) are a protocol facility open
                // to every admitted identity.
                return true
            }
            if let cached = publishCache[identity]?[topic] {
                allowed = cached
            } else {
                publishers.insert(identity)
                allowed = rules(identity).allows(.publish, String(decoding: topic, as: UTF8.self))
                if publishCache[identity, default: [:]].count < 10_000 { publishCache[identity, default: [:]][topic] = allowed }
            }
        }
        if !allowed {
            counters.publishDenied += 1
            let topicText = String(decoding: topic, as: UTF8.self)
            note(
                "pub:\(identity ?? "?")",
                "dropped a publish by \(identity ?? "a revoked key") on '\(topicText)': not allowed by the policy")
        }
        return allowed
    }

    func allowsSubscribe(_ identity: String?, prefix: [UInt8]) -> Bool {
        let text = String(decoding: prefix, as: UTF8.self)
        guard let identity, rules(identity).allowsSubscription(prefix: text) else {
            counters.subscribeDenied += 1
            note("sub:\(identity ?? "?")", "refused subscription by \(identity ?? "a revoked key") to '\(text)'")
            return false
        }
        subscribers[identity, default: 0] += 1
        return true
    }

    /// Checks a request-plane message; returns what to do instead when it is refused.
    func checkRequest(_ frames: Frames, identity: String?) -> [Broker.Action]? {
        guard frames.count >= 4, frames[1].isEmpty else { return nil }
        let sender = frames[0]
        if frames[2] == MDP.client {
            let service = String(decoding: frames[3], as: UTF8.self)
            if service.hasPrefix("mmi.") { return identity == nil ? refuse(sender, service, [], "revoked key") : nil }
            let subject = "\(service).\(RequestBody.peekMethod(frames, from: 4))"
            guard let identity else { return refuse(sender, service, Array(frames.dropFirst(4)), "revoked key") }
            // Refilling the retained store is persist's alone, whatever the policy says.
            if subject == Self.refillSubject, identity != Self.refillIdentity {
                counters.callDenied += 1
                note("call:\(identity)", "refused call \(subject) by \(identity): only \(Self.refillIdentity) may refill the retained store")
                return refuse(sender, service, Array(frames.dropFirst(4)), "only \(Self.refillIdentity) may call \(subject)")
            }
            if rules(identity).allows(.call, subject) { return nil }
            counters.callDenied += 1
            note("call:\(identity)", "refused call \(subject) by \(identity): not allowed by the policy")
            return refuse(sender, service, Array(frames.dropFirst(4)), "\(identity) may not call \(subject)")
        }
        if frames[2] == MDP.worker, frames.count >= 5, frames[3] == [MDP.Command.ready.rawValue] {
            let service = String(decoding: frames[4], as: UTF8.self)
            if let identity, rules(identity).allows(.serve, service) { return nil }
            counters.callDenied += 1
            note(
                "serve:\(identity ?? "?")", "refused worker for '\(service)' from \(identity ?? "a revoked key"): not allowed to serve it")
            return [.send(MDP.command(to: sender, .disconnect))]
        }
        return identity == nil ? [.send(MDP.command(to: sender, .disconnect))] : nil
    }

    /// A 403 for the request whose body is `body`, in the body's form.
    private func refuse(_ client: [UInt8], _ service: String, _ body: Frames, _ why: String) -> [Broker.Action] {
        let reply = ReplyBody.error(403, code: "forbidden", message: why, id: RequestBody.peekMeta(body)?.id, from: "kernel")
        return [.send(MDP.clientReply(to: client, service: service, body: reply.encode(answering: body)))]
    }

    // MARK: reload and revocation

    /// Re-reads `authorized/` when asked or when it changed (checked once a second); returns
    /// the identities that lost every key.
    func reloadIfChanged(now: MonotonicTime, force: Bool = false) -> (added: [String], removed: [String])? {
        guard force || now >= nextWatch else { return nil }
        nextWatch = now + .seconds(1)
        let current = security.authorizedSignature()
        guard force || current != signature else { return nil }
        signature = current
        let fresh: [String: String]
        do {
            fresh = try security.loadAuthorized()
        } catch {
            logger.error("authorized keys not reloaded, keeping the previous set: \(error)")
            return nil
        }
        let before = Set(authorized.values)
        let after = Set(fresh.values)
        authorized = fresh
        lastUserID = []
        lastIdentity = nil
        publishCache.removeAll()
        let removed = before.subtracting(after).sorted()
        let added = after.subtracting(before).sorted()
        logger.notice(
            "authorized keys reloaded",
            metadata: [
                "identities": String(after.count), "added": added.joined(separator: ","), "removed": removed.joined(separator: ","),
            ])
        return (added, removed)
    }

    /// Forgets the subscriptions of revoked identities once they were cut off.
    func forget(_ identities: [String]) {
        for identity in identities {
            subscribers[identity] = nil
            publishers.remove(identity)
        }
    }

    // MARK: handshake reports

    func readMonitors() {
        for (monitor, name) in monitors {
            while let event = monitor.next() {
                if event.event == ZMQ_EVENT_ACCEPTED {
                    lastAccepted = peerAddress(fd: event.value)
                } else if event.isHandshakeFailure {
                    counters.handshakeFailures += 1
                    var detail = "\(event.name) on the \(name) endpoint \(event.endpoint)"
                    if event.event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, let lastDenied {
                        detail += " from \(lastDenied.address), key \(lastDenied.key)"
                    } else if let lastAccepted {
                        detail += " (last accepted peer \(lastAccepted))"
                    }
                    note("handshake:\(name):\(event.event)", detail)
                }
            }
        }
    }

    private func peerAddress(fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0, storage.ss_family == sa_family_t(AF_INET) else { return nil }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { addr -> String in
                var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                var inAddr = addr.pointee.sin_addr
                inet_ntop(AF_INET, &inAddr, &buffer, socklen_t(buffer.count))
                return "\(cString(buffer)):\(UInt16(bigEndian: addr.pointee.sin_port))"
            }
        }
    }

    /// Logs a refusal at most once per ``logInterval`` per kind (and identity, a bounded set):
    /// never keyed by what a peer can vary (a key, an address, a topic), or fresh keys would
    /// each get a line. The lines held back are counted (`log_suppressed` in `bus.stats`) and
    /// the next line of the kind says how many.
    private func note(_ key: String, _ message: String) {
        if selfTesting { return }
        if let suppressed = limiter.shouldLog(key, now: .now) {
            logger.warning(message, metadata: suppressed > 0 ? ["suppressed": String(suppressed)] : [:])
        } else {
            logSuppressed += 1
        }
    }

    static let logInterval: Duration = .seconds(10)
    private(set) var logSuppressed: UInt64 = 0

    var statsObject: [String: Any] {
        [
            "identities": Set(authorized.values).count, "zap_allowed": counters.zapAllowed, "zap_denied": counters.zapDenied,
            "publish_denied": counters.publishDenied, "subscribe_denied": counters.subscribeDenied,
            "call_denied": counters.callDenied, "handshake_failures": counters.handshakeFailures,
            "log_suppressed": logSuppressed,
        ]
    }
}
