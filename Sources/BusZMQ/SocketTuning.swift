import CZeroMQ

/// The options every socket of the bus gets, so none is left on libzmq's dangerous defaults
/// (infinite linger, no heartbeats, unbounded message size, fast endless reconnects).
public struct SocketTuning: Sendable {
    /// Milliseconds unsent messages are kept after close (never infinite).
    public var lingerMs: Int32 = 200
    /// Send and receive high-water marks in messages.
    public var sendHighWater: Int32 = 10_000
    public var receiveHighWater: Int32 = 10_000
    /// Largest accepted inbound message in bytes; a peer sending more is disconnected.
    public var maxMessageSize: Int64 = 1 << 20
    /// ZMTP heartbeats: interval, timeout and the TTL asked of the peer, in milliseconds.
    public var heartbeatIntervalMs: Int32 = 1_000
    public var heartbeatTimeoutMs: Int32 = 3_000
    public var heartbeatTTLMs: Int32 = 3_000
    /// Reconnect back-off: first interval and cap, in milliseconds. libzmq doubles the interval
    /// (plus a random part of up to the first interval) while connecting fails, but starts over
    /// from the first interval each time an established connection closes: a peer that accepts
    /// and closes at once (a crashed or foreign process on the port) gets an attempt every first
    /// interval to twice that. A second, not 100 ms, keeps that to about one a second per
    /// socket, and a restarted kernel still sees every client within seconds.
    /// The cap bounds how long a socket waits after the network is back: while a cable is cut,
    /// connecting fails at once and the interval grows to the cap, so the next attempt can
    /// come up to the cap plus one first interval after the link returns. Two seconds keep
    /// that under 3 s (every service back within 5 s of its link); a kernel that is down then
    /// costs each socket an attempt every 2 to 3 s.
    public var reconnectIntervalMs: Int32 = 1_000
    public var reconnectIntervalMaxMs: Int32 = 2_000
    /// Queue messages only on completed connections (see ``client``).
    public var immediate: Bool = false

    public init() {}

    /// The defaults described above.
    public static let `default` = SocketTuning()

    /// The defaults with `ZMQ_IMMEDIATE` on: for a DEALER or REQ whose connection is not
    /// replaced while it reads (a raw request's one-shot DEALER; the bench's Swift baseline,
    /// whose peer lives as long as the run). A socket that outlives reconnects keeps it off
    /// (see ``subscriber``).
    public static var client: SocketTuning {
        var t = SocketTuning()
        t.immediate = true
        return t
    }

    /// The defaults for a SUB connecting towards the kernel: `ZMQ_IMMEDIATE` stays off. A SUB
    /// sends nothing the option could hold back (libzmq sends its subscriptions again on every
    /// new connection either way), and with it on, libzmq 4.3 replaces the socket's inbound pipe
    /// at each reconnect: if the socket then handles its commands between two frames of a
    /// message (`ZMQ_EVENTS` pre-reads a SUB's next first frame; a receive handles them every
    /// hundredth call), the rest of the message is gone and libzmq aborts the process
    /// (`Assertion failed: !_more (src/fq.cpp:112)`). With it off the pipe survives the
    /// reconnect and the rest of the message is read.
    public static var subscriber: SocketTuning { SocketTuning() }

    func apply(to socket: ZMQSocket) throws(ZMQError) {
        try socket.set(ZMQ_LINGER, lingerMs)
        try socket.set(ZMQ_SNDHWM, sendHighWater)
        try socket.set(ZMQ_RCVHWM, receiveHighWater)
        try socket.set64(ZMQ_MAXMSGSIZE, maxMessageSize)
        try socket.set(ZMQ_HEARTBEAT_IVL, heartbeatIntervalMs)
        try socket.set(ZMQ_HEARTBEAT_TIMEOUT, heartbeatTimeoutMs)
        try socket.set(ZMQ_HEARTBEAT_TTL, heartbeatTTLMs)
        try socket.set(ZMQ_RECONNECT_IVL, reconnectIntervalMs)
        try socket.set(ZMQ_RECONNECT_IVL_MAX, reconnectIntervalMaxMs)
        if immediate { try socket.set(ZMQ_IMMEDIATE, 1) }
    }
}
