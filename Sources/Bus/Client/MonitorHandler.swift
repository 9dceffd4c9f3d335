import BusSupport
import BusZMQ
import CZeroMQ

/// Watches one client socket's connection: whether a handshake completed and no disconnect
/// followed, and what went wrong in a failed handshake (a refused CURVE key, or a client
/// without keys talking to a kernel that runs with them). For a socket connected towards a host
/// name, it has the name looked up again when the socket stays without a connection (see
/// ``IOLoop/lookUpIfDue(_:now:)``).
final class MonitorHandler: IOHandler {
    let monitor: ZMQMonitor
    var socket: ZMQSocket { monitor.socket }
    /// The host name the socket connects towards, when it is one.
    let host: String?
    private var connectedWithoutHandshake = false
    /// Since when the socket has had no connection whose handshake completed (nil while it has
    /// one).
    private(set) var unconnectedSince: MonotonicTime? = .now
    /// A connection's handshake completed and it has not closed since.
    var isConnected: Bool { unconnectedSince == nil }

    init(loop: IOLoop, target: ZMQSocket, host: String?) throws(ZMQError) {
        monitor = try ZMQMonitor(loop.context, target: target, events: ZMQMonitor.Event.handshakeEvents, name: "client")
        self.host = host
    }

    func readable(_ loop: IOLoop) {
        let secure = loop.thread.security != nil
        while let event = monitor.next() {
            switch event.event {
            case ZMQ_EVENT_CONNECTED:
                connectedWithoutHandshake = true
            case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
                connectedWithoutHandshake = false
                if secure, loop.handshakeProblem != nil { loop.logger.notice("CURVE handshake with the kernel succeeded") }
                loop.handshakeProblem = nil
                unconnectedSince = nil
            case ZMQ_EVENT_DISCONNECTED:
                lostConnection()
                // Without keys, a refused handshake reports HANDSHAKE_FAILED_* first (below); a bare
                // disconnect mid-handshake is then a kernel that stopped, not a problem to report.
                guard connectedWithoutHandshake else { break }
                connectedWithoutHandshake = false
                if secure {
                    report(
                        loop, secure: true,
                        "the kernel closed the connection during the CURVE handshake (wrong kernel public key, or the kernel does not run with --keys)"
                    )
                }
            case _ where event.isHandshakeFailure:
                connectedWithoutHandshake = false
                lostConnection()
                let why =
                    event.event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                    ? "the kernel refused this key (ZAP status \(event.value)): is its public key in the kernel's authorized/ folder?"
                    : event.name
                report(loop, secure: secure, secure ? why : "this client has no CURVE keys; does the kernel run with --keys?")
            default:
                break
            }
        }
    }

    private func lostConnection() {
        if unconnectedSince == nil { unconnectedSince = .now }
    }

    private func report(_ loop: IOLoop, secure: Bool, _ problem: String) {
        let problem = "\(secure ? "security handshake" : "handshake") failed: \(problem)"
        if loop.handshakeProblem != problem { loop.logger.error("\(problem)") }
        loop.handshakeProblem = problem
    }

    func tick(_ loop: IOLoop, now: MonotonicTime) -> MonotonicTime? {
        guard let host, let since = unconnectedSince else { return nil }
        let due = since.advanced(by: IOLoop.lookUpAgainAfterNanos)
        return now < due ? due : loop.lookUpIfDue(host, now: now)
    }

    func close(_ loop: IOLoop) {
        monitor.close()
    }
}
