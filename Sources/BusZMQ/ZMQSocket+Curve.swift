import CZeroMQ

extension ZMQSocket {
    /// Makes this a CURVE server (before bind): clients must know `keyPair`'s public key, and
    /// the ZAP handler of the context decides who is admitted (`domain`).
    package func makeCurveServer(_ keyPair: CurveKeyPair, domain: String) throws(ZMQError) {
        guard let secret = keyPair.secretKey else { throw ZMQError(code: EINVAL, call: "curve server without a secret key") }
        try set(ZMQ_CURVE_SERVER, 1)
        try set(ZMQ_CURVE_SECRETKEY, bytes: secret)
        try set(ZMQ_ZAP_DOMAIN, string: domain)
    }

    /// Makes this a CURVE client of a server with public key `serverKey` (before connect).
    package func makeCurveClient(_ keyPair: CurveKeyPair, serverKey: [UInt8]) throws(ZMQError) {
        guard let secret = keyPair.secretKey else { throw ZMQError(code: EINVAL, call: "curve client without a secret key") }
        try set(ZMQ_CURVE_SERVERKEY, bytes: serverKey)
        try set(ZMQ_CURVE_PUBLICKEY, bytes: keyPair.publicKey)
        try set(ZMQ_CURVE_SECRETKEY, bytes: secret)
    }
}

/// A socket's event monitor (`zmq_socket_monitor`): a PAIR connected to the monitored socket's
/// inproc event endpoint, read on the owner's thread.
///
/// libzmq's I/O thread writes each event with a blocking send. Once this reader is closed, the
/// next event of the monitored socket (a connection made or lost, a handshake) would block that
/// thread forever, and with it every connection of the context: so ``close()`` stops the
/// monitoring (`zmq_socket_monitor(socket, NULL, 0)`) before it closes the reader, and closing
/// the monitored socket stops it too, whichever of the two is closed first.
package final class ZMQMonitor {
    package struct Event: Sendable, Equatable {
        package let event: Int32
        package let value: Int32
        package let endpoint: String

        package var isHandshakeFailure: Bool {
            event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH || event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                || event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
        }

        /// A failed connect with the next attempt scheduled; ``value`` is the wait in milliseconds.
        package var isConnectRetry: Bool { event == ZMQ_EVENT_CONNECT_RETRIED }

        package var name: String {
            switch event {
            case ZMQ_EVENT_CONNECTED: return "connected"
            case ZMQ_EVENT_ACCEPTED: return "accepted"
            case ZMQ_EVENT_DISCONNECTED: return "disconnected"
            case ZMQ_EVENT_HANDSHAKE_SUCCEEDED: return "handshake succeeded"
            case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: return "handshake failed: authentication rejected (ZAP status \(value))"
            case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL: return "handshake failed: protocol error (mechanism mismatch or bad CURVE message)"
            case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: return "handshake failed (no detail)"
            case ZMQ_EVENT_CONNECT_RETRIED: return "connect failed, next attempt in \(value) ms"
            default: return "event \(event)"
            }
        }
    }

    package let socket: ZMQSocket
    /// The monitored socket.
    private let target: ZMQSocket

    /// Starts monitoring `target` for `events` (a ZMQ_EVENT_* mask).
    package init(_ context: ZMQContext, target: ZMQSocket, events: Int32, name: String) throws(ZMQError) {
        let endpoint = "inproc://bus.monitor.\(name).\(UInt32.random(in: 0...UInt32.max))"
        let raw = target.raw
        self.target = target
        try zmqCheck("zmq_socket_monitor(\(endpoint))") { zmq_socket_monitor(raw, endpoint, events) }
        target.isMonitored = true
        var tuning = SocketTuning.default
        tuning.lingerMs = 0
        let reader: ZMQSocket
        do {
            reader = try ZMQSocket(context, .pair, tuning: tuning)
        } catch {
            Self.stop(target)
            throw error
        }
        do {
            try reader.connect(endpoint)
        } catch {
            Self.stop(target)
            reader.close()
            throw error
        }
        socket = reader
    }

    /// Stops the events at their source, while the reader still exists.
    private static func stop(_ target: ZMQSocket) {
        guard !target.isClosed, target.isMonitored else { return }
        zmq_socket_monitor(target.raw, nil, 0)
        target.isMonitored = false
    }

    /// The next event, or nil when none is waiting.
    package func next() -> Event? {
        guard let frames = try? socket.receive(), frames.count >= 2, frames[0].count >= 6 else { return nil }
        let head = frames[0]
        let event = Int32(head[0]) | Int32(head[1]) << 8
        let value = Int32(head[2]) | Int32(head[3]) << 8 | Int32(head[4]) << 16 | Int32(head[5]) << 24
        return Event(event: event, value: value, endpoint: String(decoding: frames[1], as: UTF8.self))
    }

    package func close() {
        Self.stop(target)
        socket.close()
    }
}

extension ZMQMonitor.Event {
    /// Connect attempts that failed, each with the wait before the next one.
    package static let connectRetries: Int32 = ZMQ_EVENT_CONNECT_RETRIED
    package static let handshakeEvents: Int32 =
        ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
        | ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_ACCEPTED
}
