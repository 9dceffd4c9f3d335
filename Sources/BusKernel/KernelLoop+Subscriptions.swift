import BusWire
import Foundation

/// Subscriptions arriving on events-out: each is checked by the ``SubscriptionGate`` before it
/// is applied (docs/PROTOCOL.md, Subscription limits).
extension KernelLoop {
    /// Reads (un)subscriptions and applies those the gate accepts to the connection they came
    /// from (manual mode applies to the last one read).
    func readSubscriptions(limit: Int) {
        for _ in 0..<limit {
            guard let received = try? xpub.receive(property: guardian == nil ? "Peer-Address" : "User-Id"),
                let frame = received.frames.first, let kind = frame.first, kind <= 1
            else { break }
            let prefix = Array(frame.dropFirst())
            if kind == 1 {
                let identity = guardian?.identity(userID: received.property)
                let owner = guardian == nil ? (received.property ?? "?") : (identity ?? "?")
                let allowed = prefix.count > gate.limits.maxPrefixBytes || guardian?.allowsSubscribe(identity, prefix: prefix) != false
                if let refusal = gate.subscribe(prefix, owner: owner, allowed: allowed) {
                    noteRefusedSubscription(refusal, prefix: prefix, owner: owner)
                    continue
                }
                try? xpub.subscribe(prefix)
                events.subscription(frame)
                sendRetained(matching: prefix)
            } else {
                let owner = received.property.map { guardian == nil ? $0 : (guardian?.identity(userID: $0) ?? "?") }
                if gate.unsubscribe(prefix, owner: owner) {
                    try? xpub.unsubscribe(prefix)
                    events.subscription(frame)
                }
            }
        }
        if gate.mustRebind {
            if let suppressed = logLimiter.shouldLog("subscriptions-rebind", now: .now) {
                logger.warning(
                    "closing every events-out connection: libzmq holds \(gate.refusedHeldCount) refused subscriptions for open connections (subscribers reconnect and subscribe again)",
                    metadata: suppressed > 0 ? ["suppressed": String(suppressed)] : [:])
            }
            rebindEventsOut(reason: "refused subscriptions held")
        }
    }

    private func noteRefusedSubscription(_ refusal: SubscriptionGate.Refusal, prefix: [UInt8], owner: String) {
        // The policy's own refusals are logged by the guard.
        guard refusal != .forbidden else { return }
        if let suppressed = logLimiter.shouldLog("subscription-refused", now: .now) {
            let shown = String(decoding: prefix.prefix(64), as: UTF8.self)
            logger.warning(
                "refused a subscription (\(refusal.rawValue)) from \(owner) to '\(shown)'\(prefix.count > 64 ? "…" : "") (\(prefix.count) bytes); counted in bus.stats subscribing.refused",
                metadata: suppressed > 0 ? ["suppressed": String(suppressed)] : [:])
        }
    }

    /// The last-value cache: when a subscription arrives, every retained value under its
    /// prefix goes out again, flagged `snapshot`. The subscription is in XPUB's table by the
    /// time the kernel reads it, so the new subscriber is sure to get the current value, and
    /// a value retained before the subscription landed is never missed. Other subscribers of
    /// the topic see a snapshot with a sequence number they already have and drop it.
    /// The values are found in the retained topics kept in order, from the prefix on: the
    /// walk covers the values sent, not every retained topic.
    func sendRetained(matching prefix: [UInt8]) {
        events.retainedOrder.forEach(from: prefix) { key in
            guard key.starts(with: prefix) else { return false }
            guard let entry = events.retained[String(decoding: key, as: UTF8.self)] else { return true }
            var meta = entry.meta
            if meta.count > 1 { meta[1] |= EventMeta.Flags.snapshot.rawValue }
            if !sendOwn([key, meta, entry.payload]) {
                events.totalDrops += 1
            }
            return true
        }
    }
}
