import Bus
import Foundation

/// Rates between two samples of `bus.stats`.
struct StatsReport {
    let previous: KernelStats
    let current: KernelStats

    /// The kernel's elapsed time between the samples, in seconds.
    var elapsed: Double {
        let us = current.timeUs > previous.timeUs ? current.timeUs - previous.timeUs : 0
        return max(Double(us) / 1e6, 0.001)
    }

    struct TopicRow {
        var stats: KernelStats.TopicStats
        var messagesPerSecond: Double
        var bytesPerSecond: Double
    }

    struct ServiceRow {
        var snapshot: ServiceSnapshot
        var requestsPerSecond: Double
    }

    var topics: [TopicRow] {
        let before = Dictionary(previous.topics.map { ($0.topic, $0) }, uniquingKeysWith: { a, _ in a })
        return current.topics.map { topic in
            let old = before[topic.topic]
            let messages = topic.messages >= (old?.messages ?? 0) ? topic.messages - (old?.messages ?? 0) : topic.messages
            let bytes = topic.bytes >= (old?.bytes ?? 0) ? topic.bytes - (old?.bytes ?? 0) : topic.bytes
            return TopicRow(stats: topic, messagesPerSecond: Double(messages) / elapsed, bytesPerSecond: Double(bytes) / elapsed)
        }
    }

    var services: [ServiceRow] {
        let before = Dictionary(previous.services.map { ($0.service, $0) }, uniquingKeysWith: { a, _ in a })
        return current.services.map { service in
            let old = before[service.service]?.requests ?? 0
            let delta = service.requests >= old ? service.requests - old : service.requests
            return ServiceRow(snapshot: service, requestsPerSecond: Double(delta) / elapsed)
        }
    }

    func text() -> String {
        let events = current.events
        var text = "kernel up \(Format.age(ms: current.uptimeMs)), \(events.messages) events (\(Format.bytes(Double(events.bytes)))), "
        text += "\(events.drops) dropped, \(events.malformed) malformed, "
        text += "\(events.stalls) held for a full subscriber (\(events.stalledMs) ms); rates over \(Format.number(elapsed)) s\n"
        let catchUp = events.catchUp
        if catchUp.active || catchUp.repeated > 0 {
            let streams = "\(catchUp.streams) stream\(catchUp.streams == 1 ? "" : "s")"
            text += "catch-up \(catchUp.active ? "active: the newest event of \(streams) kept" : "idle")"
            text += ", \(catchUp.repeated) repeated since start"
            text += catchUp.overflow > 0 ? ", \(catchUp.overflow) events of streams over its limits\n" : "\n"
        }
        text += "\n"
        let topicRows = topics
        if topicRows.isEmpty {
            text += "no topics yet\n"
        } else {
            var table = Table("TOPIC", ">MSG/S", ">BYTES/S", ">TOTAL", ">DROPS", ">SUBS", "PUBLISHERS")
            for row in topicRows {
                table.add([
                    row.stats.topic + (row.stats.retained ? " (r)" : ""), Format.rate(row.messagesPerSecond),
                    Format.bytes(row.bytesPerSecond), String(row.stats.messages), String(row.stats.drops),
                    String(row.stats.subscribers), row.stats.publishers.joined(separator: ","),
                ])
            }
            text += table.render()
            if let total = current.topicsTotal, total > topicRows.count {
                text += "(the first \(topicRows.count) of \(total) topics by name)\n"
            }
        }
        text += "\n"
        let serviceRows = services
        if serviceRows.isEmpty {
            text += "no services\n"
        } else {
            var table = Table("SERVICE", ">INSTANCES", ">REQ/S", ">P50", ">P99", ">REQUESTS", ">ERRORS", ">FAILED", ">QUEUED")
            for row in serviceRows {
                let s = row.snapshot
                table.add([
                    s.service, String(s.instances.count), Format.rate(row.requestsPerSecond), Format.latency(us: s.p50Us),
                    Format.latency(us: s.p99Us), String(s.requests), String(s.errors), String(s.failed), String(s.queued),
                ])
            }
            text += table.render()
        }
        return text
    }

    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

    func jsonObject() -> [String: Any] {
        let events = current.events
        return [
            "time": Format.iso(us: current.timeUs), "interval_s": Self.rounded(elapsed), "uptime_ms": current.uptimeMs,
            "events": [
                "messages": events.messages, "bytes": events.bytes, "drops": events.drops, "malformed": events.malformed,
                "stalls": events.stalls, "stalled_ms": events.stalledMs,
                "catch_up": [
                    "active": events.catchUp.active, "streams": events.catchUp.streams, "repeated": events.catchUp.repeated,
                    "overflow": events.catchUp.overflow,
                ],
            ],
            "topics": topics.map { row -> [String: Any] in
                [
                    "topic": row.stats.topic, "msgs_per_s": Self.rounded(row.messagesPerSecond), "bytes_per_s": Self.rounded(row.bytesPerSecond),
                    "messages": row.stats.messages, "bytes": row.stats.bytes, "drops": row.stats.drops,
                    "subscribers": row.stats.subscribers, "publishers": row.stats.publishers, "retained": row.stats.retained,
                ]
            },
            "services": services.map { row -> [String: Any] in
                let s = row.snapshot
                var object: [String: Any] = [
                    "service": s.service, "instances": s.instances.count, "requests_per_s": Self.rounded(row.requestsPerSecond),
                    "requests": s.requests, "errors": s.errors, "failed": s.failed, "queued": s.queued,
                ]
                object["p50_us"] = s.p50Us ?? NSNull()
                object["p99_us"] = s.p99Us ?? NSNull()
                return object
            },
        ]
    }
}
