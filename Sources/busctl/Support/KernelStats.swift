import Bus
import Foundation

/// The kernel's `bus.stats` answer, as `stats` and `graph` read it. Fields the kernel may add
/// later are ignored; counters it does not send read as zero.
struct KernelStats: Decodable, Sendable {
    struct Events: Decodable, Sendable {
        var messages: UInt64 = 0
        var bytes: UInt64 = 0
        var drops: UInt64 = 0
        var malformed: UInt64 = 0
        /// Times a full subscriber queue made the kernel hold the stream, and for how long.
        var stalls: UInt64 = 0
        var stalledMs: Int64 = 0
        /// After a drop: the streams whose newest event the kernel keeps re-sending.
        var catchUp = CatchUp()

        struct CatchUp: Decodable, Sendable {
            var active = false
            var streams = 0
            var repeated: UInt64 = 0
            var overflow: UInt64 = 0
        }

        enum CodingKeys: String, CodingKey {
            case messages, bytes, drops, malformed, stalls
            case stalledMs = "stalled_ms"
            case catchUp = "catch_up"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            messages = try c.decodeIfPresent(UInt64.self, forKey: .messages) ?? 0
            bytes = try c.decodeIfPresent(UInt64.self, forKey: .bytes) ?? 0
            drops = try c.decodeIfPresent(UInt64.self, forKey: .drops) ?? 0
            malformed = try c.decodeIfPresent(UInt64.self, forKey: .malformed) ?? 0
            stalls = try c.decodeIfPresent(UInt64.self, forKey: .stalls) ?? 0
            stalledMs = try c.decodeIfPresent(Int64.self, forKey: .stalledMs) ?? 0
            catchUp = try c.decodeIfPresent(CatchUp.self, forKey: .catchUp) ?? CatchUp()
        }
    }

    struct TopicStats: Decodable, Sendable {
        var topic: String
        var messages: UInt64
        var bytes: UInt64
        var drops: UInt64
        var publishers: [String]
        var subscribers: Int
        var retained: Bool
    }

    struct Subscription: Decodable, Sendable {
        var prefix: String
        var count: Int
    }

    struct Call: Decodable, Sendable {
        var caller: String
        var service: String
        var count: Int
    }

    var uptimeMs: Int64
    var timeUs: UInt64
    var events: Events
    var topics: [TopicStats]
    var subscriptions: [Subscription]
    var services: [ServiceSnapshot]
    var calls: [Call]
    /// How many topics the kernel counts; it sends a page of them (`topics`, sorted by name).
    var topicsTotal: Int?

    enum CodingKeys: String, CodingKey {
        case uptimeMs = "uptime_ms"
        case timeUs = "time_us"
        case topicsTotal = "topics_total"
        case events, topics, subscriptions, services, calls
    }

    /// Asks the kernel for its stats.
    static func fetch(_ client: BusClient, timeout: Duration) async throws -> KernelStats {
        let reply = try await client.call("bus", "stats", timeout: timeout)
        guard reply.status == 200 else {
            throw BusError.reply(status: reply.status, code: reply.errorBody.code, message: reply.errorBody.message)
        }
        do {
            return try JSONDecoder().decode(KernelStats.self, from: Data(reply.payload))
        } catch {
            throw CommandFailure("the kernel's bus.stats answer is not what this busctl understands: \(error)")
        }
    }

    /// Topics whose name starts with a subscription's wire prefix (a subscription of "" is
    /// every topic).
    func topics(under prefix: String) -> [TopicStats] {
        topics.filter { $0.topic.hasPrefix(prefix) }
    }
}
