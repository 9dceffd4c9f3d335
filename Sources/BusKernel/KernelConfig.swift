import BusWire
import BusZMQ

/// Everything `busctl kernel` can be told.
public struct KernelConfig: Sendable {
    public var endpoints: Endpoints
    public var broker = Broker.Config()
    public var tuning = SocketTuning.default
    /// High-water mark of the XPUB towards each subscriber: the events queued for it.
    public var subscriberHighWater: Int32 = 10_000
    /// How long the kernel holds the event stream when a subscriber's queue is full, waiting for
    /// it to make room, before it drops for that subscriber alone (a gap for it; the kernel's
    /// count of such drops is a lower bound: docs/PROTOCOL.md, Slow subscribers).
    /// While it holds, publishers' own queues absorb the wait and then make `publish` wait (flow
    /// control), so a subscriber that keeps up on average loses nothing. After the grace runs
    /// out once, events that one full queue cannot take are dropped at once for
    /// ``subscriberLossyWindow``, so a stuck subscriber costs the others one grace period per
    /// window, not one per event. Zero: never hold (drop as soon as a queue is full).
    public var subscriberGrace: Duration = .milliseconds(100)
    /// See ``subscriberGrace``.
    public var subscriberLossyWindow = KernelContract.subscriberLossyWindow
    /// How long after a drop the kernel keeps the newest event of every stream it forwards and
    /// re-sends them (flagged repeated), so a subscriber that lost a stream's end sees the gap
    /// (`TailCatchUp`). A subscriber that stays stuck longer than this after the last drop
    /// still sees losses at each stream's next event, but not the end of a stream gone quiet.
    /// Zero: never.
    public var catchUpWindow: Duration = .seconds(30)
    /// Bounds on subscriptions (prefix length, per owner, in all), checked before the kernel
    /// applies one (docs/PROTOCOL.md, Limits).
    var subscriptionLimits = SubscriptionGate.Limits()
    /// Most live subscriptions of one owner: the CURVE identity with security on, else the
    /// peer's IP address (libzmq's XPUB names no connection).
    public var maxSubscriptionsPerOwner: Int {
        get { subscriptionLimits.perOwner }
        set { subscriptionLimits.perOwner = max(1, newValue) }
    }
    /// Most live subscriptions in all.
    public var maxSubscriptions: Int {
        get { subscriptionLimits.total }
        set { subscriptionLimits.total = max(1, newValue) }
    }
    /// Most topics with a retained value.
    public var maxRetainedTopics = 100_000
    /// CURVE + ZAP + permissions; nil runs without security (loopback development).
    public var security: KernelSecurity?

    public init(endpoints: Endpoints) {
        self.endpoints = endpoints
    }
}
