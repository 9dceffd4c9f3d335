/// Everything `busctl kernel` can be told.
public struct KernelConfig: Sendable {
    public var endpoints: Endpoints
    public var broker = Broker.Config()
    public var tuning = SocketTuning.default
    /// High-water mark of the XPUB towards each subscriber; past it libzmq drops for that
    /// subscriber only (it sees a gap in sequence numbers), never blocking or starving others.
    public var subscriberHighWater: Int32 = 10_000
    /// Most topics with a retained value.
    public var maxRetainedTopics = 100_000
    /// CURVE + ZAP + permissions; nil runs without security (loopback development).
    public var security: KernelSecurity?

    public init(endpoints: Endpoints) {
        self.endpoints = endpoints
    }
}
