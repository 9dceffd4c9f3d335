import BusWire

/// The kernel's check of every subscription that reaches events-out, before it applies it.
///
/// The XPUB runs in manual mode: libzmq hands each (un)subscription to the kernel and applies
/// nothing itself, so a subscription the gate refuses never enters the table events are
/// matched against and never triggers retained snapshots. What libzmq still keeps of a refused
/// one is its own record for the connection's end (`_manual_subscriptions` in libzmq 4.3.4),
/// bounded per subscription by the events-out frame limit (``maxFrameBytes``) and in number by
/// ``mustRebind``.
///
/// libzmq's XPUB gives the kernel no connection id, so the per-peer bound counts per *owner*:
/// the CURVE identity with security on, else the peer's IP address (`Peer-Address`; every
/// loopback client shares one). An unsubscription that libzmq generates when a connection
/// closes carries no owner: it is taken from any owner holding that prefix.
struct SubscriptionGate {
    struct Limits: Sendable, Equatable {
        /// Longest accepted prefix: no topic is longer, so a longer prefix can never match.
        var maxPrefixBytes = Topic.maxLength
        /// Most live subscriptions of one owner (identity, or peer address without security).
        var perOwner = 10_000
        /// Most live subscriptions in all.
        var total = 100_000
        /// Most prefix bytes of all live subscriptions (libzmq's table costs tens of bytes per
        /// prefix byte).
        var totalBytes = 4 << 20

        init() {}
    }

    enum Refusal: String, CaseIterable {
        case tooLong = "too_long"
        case ownerLimit = "owner_limit"
        case totalLimit = "total_limit"
        case forbidden
    }

    /// The inbound frame limit of events-out: a subscription message is one frame of a kind
    /// byte and the prefix (plus ZMTP command or CURVE box framing, and CURVE's handshake
    /// commands of under 300 bytes must pass too). A bigger frame makes libzmq close the
    /// connection before anything of it is stored.
    static let maxFrameBytes: Int64 = 512

    let limits: Limits
    /// Live accepted subscriptions: prefix -> owner -> count.
    private(set) var accepted: [[UInt8]: [String: Int]] = [:]
    private(set) var acceptedCount = 0
    private(set) var acceptedBytes = 0
    private var perOwner: [String: Int] = [:]
    /// Refused subscriptions libzmq still keeps for their connection: prefix -> count.
    private var refusedHeld: [[UInt8]: Int] = [:]
    private(set) var refusedHeldCount = 0
    private var refusedHeldBytes = 0
    private(set) var refused: [Refusal: UInt64] = [:]
    private(set) var rebinds: UInt64 = 0

    init(limits: Limits) {
        self.limits = limits
    }

    /// Checks a subscription from `owner`; nil when it is accepted (and counted as live).
    /// `allowed` is the security policy's answer.
    mutating func subscribe(_ prefix: [UInt8], owner: String, allowed: Bool) -> Refusal? {
        let refusal: Refusal?
        if prefix.count > limits.maxPrefixBytes {
            refusal = .tooLong
        } else if !allowed {
            refusal = .forbidden
        } else if perOwner[owner, default: 0] >= limits.perOwner {
            refusal = .ownerLimit
        } else if acceptedCount >= limits.total || acceptedBytes + prefix.count > limits.totalBytes {
            refusal = .totalLimit
        } else {
            refusal = nil
        }
        if let refusal {
            refused[refusal, default: 0] += 1
            refusedHeld[prefix, default: 0] += 1
            refusedHeldCount += 1
            refusedHeldBytes += prefix.count
            return refusal
        }
        accepted[prefix, default: [:]][owner, default: 0] += 1
        perOwner[owner, default: 0] += 1
        acceptedCount += 1
        acceptedBytes += prefix.count
        return nil
    }

    /// Takes back a subscription; true when it was an accepted one (the kernel then removes it
    /// from the XPUB), false when it was refused (nothing was applied).
    mutating func unsubscribe(_ prefix: [UInt8], owner: String?) -> Bool {
        // A live connection's unsubscription names its owner; one libzmq makes for a closed
        // connection does not, and is taken from any owner holding the prefix.
        var holder: String?
        if let owners = accepted[prefix] {
            if let owner {
                holder = owners[owner] != nil ? owner : nil
            } else {
                holder = owners.keys.min()
            }
        }
        if let key = holder, var owners = accepted[prefix] {
            owners[key, default: 1] -= 1
            if owners[key] == 0 { owners[key] = nil }
            accepted[prefix] = owners.isEmpty ? nil : owners
            perOwner[key, default: 1] -= 1
            if perOwner[key] == 0 { perOwner[key] = nil }
            acceptedCount -= 1
            acceptedBytes -= prefix.count
            return true
        }
        if let count = refusedHeld[prefix] {
            refusedHeld[prefix] = count > 1 ? count - 1 : nil
            refusedHeldCount -= 1
            refusedHeldBytes -= prefix.count
        }
        return false
    }

    /// True when libzmq holds so many refused subscriptions (a peer that keeps sending them on
    /// one connection) that only closing every events-out connection frees them.
    var mustRebind: Bool {
        refusedHeldCount > limits.total || refusedHeldBytes > limits.totalBytes
    }

    /// Forgets every live subscription: events-out was re-bound, every connection closed.
    mutating func reset(rebound: Bool) {
        accepted.removeAll()
        perOwner.removeAll()
        refusedHeld.removeAll()
        acceptedCount = 0
        acceptedBytes = 0
        refusedHeldCount = 0
        refusedHeldBytes = 0
        if rebound { rebinds += 1 }
    }

    /// The `bus.stats` view.
    var statsObject: [String: Any] {
        [
            "live": acceptedCount, "bytes": acceptedBytes, "owners": perOwner.count,
            "refused": Dictionary(uniqueKeysWithValues: Refusal.allCases.map { ($0.rawValue, refused[$0] ?? 0) }),
            "refused_held": refusedHeldCount, "rebinds": rebinds,
            "limits": [
                "prefix_bytes": limits.maxPrefixBytes, "per_owner": limits.perOwner, "total": limits.total,
                "total_bytes": limits.totalBytes, "frame_bytes": Self.maxFrameBytes,
            ],
        ]
    }
}
