import BusSupport
import BusWire
import Foundation

/// `bus.stats`: bounded whatever the bus holds, in size and in work. Topics come a page at a
/// time (sorted by name, `limit` per page, `after` the last one of the previous page, and never
/// more than ``statsBudgetBytes`` of them) read from the topics kept in order, so a page walks
/// only its own topics; subscriptions as the most used ones, read from the prefixes grouped by
/// count; call edges (at most 10 000) as the most used ones. `walked` in the reply counts the
/// entries looked at, the work the call cost the kernel's thread.
extension KernelLoop {
    /// Topics per page unless `limit` says otherwise, and the most a page can hold.
    static let statsDefaultTopics = 50
    static let statsMaxTopics = 500
    /// Subscription prefixes and call edges shown (the most used).
    static let statsTopEntries = 100
    /// Roughly how many bytes of topics a reply may hold: well under the 1 MiB frame limit.
    static let statsBudgetBytes = 512 << 10

    func stats(_ params: [String: Any]) -> Result<Any, ErrorBody> {
        if params["limit"] != nil && !(params["limit"] is Int) || params["after"] != nil && !(params["after"] is String) {
            return .failure(ErrorBody(code: "invalid_request", message: "bus.stats takes {\"limit\": 1...\(Self.statsMaxTopics), \"after\": TOPIC}"))
        }
        let limit = min(Self.statsMaxTopics, max(1, params["limit"] as? Int ?? Self.statsDefaultTopics))
        let after = (params["after"] as? String).map { Array($0.utf8) }
        let now = MonotonicTime.now
        let nowMs = uptimeMs(now)
        var topics: [[String: Any]] = []
        var budget = Self.statsBudgetBytes
        var next: String?
        var walked = 0
        events.topicOrder.forEach(from: after, excludingStart: true) { key in
            walked += 1
            guard topics.count < limit, budget > 0, let counters = events.topics[key] else {
                next = topics.last?["topic"] as? String
                return false
            }
            let topic = String(decoding: key, as: UTF8.self)
            let publishers = counters.sources.sorted()
            budget -= 200 + key.count + publishers.reduce(0) { $0 + $1.utf8.count + 3 }
            topics.append([
                "topic": topic, "messages": counters.messages, "bytes": counters.bytes, "drops": counters.drops,
                "stale_retained": counters.staleRetained, "publishers": publishers,
                "subscribers": subscribers(of: key), "retained": events.retained[topic] != nil,
                "last_seen_ms_ago": nowMs - counters.lastSeenMs,
            ])
            return true
        }
        let topSubscriptions = events.subscriptions.mostUsed(Self.statsTopEntries)
        walked += topSubscriptions.walked
        let calls = broker.calls
        walked += calls.count
        // Picked by count alone (an equal count never displaces: one comparison per entry),
        // then the few picked are sorted.
        let topCalls = TopK.smallest(Self.statsTopEntries, of: calls) { $0.value > $1.value }
            .sorted { $0.value != $1.value ? $0.value > $1.value : ($0.key.caller, $0.key.service) < ($1.key.caller, $1.key.service) }
        var result: [String: Any] = [
            "uptime_ms": now.milliseconds(since: started),
            "time_us": WallClock.microsNow(),
            "events": [
                "messages": events.totalMessages, "bytes": events.totalBytes, "drops": events.totalDrops,
                "stalls": events.stalls, "stalled_ms": events.stalled.wholeMilliseconds,
                "malformed": events.malformed, "retained_topics": events.retained.count,
                "retained_refused": events.retainedRefused,
                "catch_up": [
                    "active": catchUp.isRecording, "streams": catchUp.tails.count, "bytes": catchUp.bytes,
                    "rounds": catchUp.rounds, "repeated": catchUp.sent, "overflow": catchUp.overflow,
                ],
            ],
            "requests": ["rejected": rejected, "unroutable": unroutable],
            "topics": topics,
            "topics_total": events.topics.count,
            "subscriptions": topSubscriptions.entries.map { ["prefix": String(decoding: $0.prefix, as: UTF8.self), "count": $0.count] },
            "subscriptions_total": events.subscriptions.count,
            "subscribing": gate.statsObject,
            "services": jsonArray(broker.snapshot(now: now)),
            "security": guardian?.statsObject ?? ["enabled": false],
            "calls": topCalls.map { ["caller": $0.key.caller, "service": $0.key.service, "count": $0.value] },
            "calls_total": calls.count,
            "walked": walked,
        ]
        if let next { result["topics_next"] = next }
        return .success(result)
    }

    /// Live subscriptions whose prefix covers the topic: a look-up per prefix of the topic
    /// (at most 256), whatever the number of subscriptions.
    private func subscribers(of topic: [UInt8]) -> Int {
        var total = 0
        for length in 0...topic.count {
            total += events.subscriptions[Array(topic[0..<length])] ?? 0
        }
        return total
    }
}
