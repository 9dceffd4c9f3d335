import Bus
import Foundation

/// `restore {"topic"} | {"prefix", "limit"?, "cursor"?}`.
struct RestoreInput: Decodable, Sendable {
    var topic: String?
    var prefix: String?
    var limit: Int?
    var cursor: String?
}

/// `history {"topic", "from_seq"?, "to_seq"?, "since_us"?, "until_us"?, "limit"?, "cursor"?, "order"?}`.
struct HistoryInput: Decodable, Sendable {
    var topic: String
    var fromSeq: UInt64?
    var toSeq: UInt64?
    var sinceMicros: UInt64?
    var untilMicros: UInt64?
    var limit: Int?
    var cursor: Int64?
    var order: String?

    enum CodingKeys: String, CodingKey {
        case topic, limit, cursor, order
        case fromSeq = "from_seq"
        case toSeq = "to_seq"
        case sinceMicros = "since_us"
        case untilMicros = "until_us"
    }
}

extension PersistServer {
    /// The `persist` service and its methods.
    public func makeService(name: String = "persist") -> BusService {
        let service = BusService(name: name, concurrency: 4)
        service.method("restore", raw: { [self] request in try await restore(request.decode(RestoreInput.self)) })
        service.method("history", raw: { [self] request in try await history(request.decode(HistoryInput.self)) })
        service.method("stats", raw: { [self] _ in try await stats() })
        service.method("compact", raw: { [self] _ in try await compact() })
        return service
    }

    func restore(_ input: RestoreInput) async throws -> [UInt8] {
        do {
            if let topic = input.topic {
                try Self.validate(topic: topic)
                guard let event = try await engine.restore(topic: topic) else {
                    throw ServiceError(404, "not_found", "persist has no saved value for '\(topic)'")
                }
                return try Self.json(Self.object(event))
            }
            guard let prefix = input.prefix else {
                throw ServiceError.badRequest("restore needs \"topic\" or \"prefix\"")
            }
            let limit = try Self.limit(input.limit, default: 1000, max: 10_000)
            let events = try await engine.restore(prefix: prefix, after: input.cursor, limit: limit + 1)
            let page = events.prefix(limit)
            var body: [String: Any] = ["values": page.map(Self.object), "count": page.count]
            body["next_cursor"] = events.count > limit ? page.last?.topic as Any : NSNull()
            return try Self.json(body)
        } catch let error as PersistError {
            throw Self.serviceError(error)
        }
    }

    func history(_ input: HistoryInput) async throws -> [UInt8] {
        do {
            try Self.validate(topic: input.topic)
            if let from = input.fromSeq, let to = input.toSeq, from > to {
                throw ServiceError.badRequest("from_seq \(from) is above to_seq \(to)")
            }
            if let since = input.sinceMicros, let until = input.untilMicros, since > until {
                throw ServiceError.badRequest("since_us \(since) is after until_us \(until)")
            }
            guard input.order == nil || input.order == "asc" || input.order == "desc" else {
                throw ServiceError.badRequest("order is \"asc\" or \"desc\", not \"\(input.order!)\"")
            }
            let query = HistoryQuery(
                topic: input.topic, fromSeq: input.fromSeq, toSeq: input.toSeq, sinceMicros: input.sinceMicros, untilMicros: input.untilMicros,
                limit: try Self.limit(input.limit, default: 100, max: HistoryQuery.maxLimit), cursor: input.cursor, descending: input.order == "desc")
            let page = try await engine.history(query)
            return try Self.json([
                "topic": input.topic, "events": page.events.map(Self.object), "count": page.events.count,
                "next_cursor": page.nextCursor.map { $0 as Any } ?? NSNull(),
            ])
        } catch let error as PersistError {
            throw Self.serviceError(error)
        }
    }

    func stats() async throws -> [UInt8] {
        let (store, writer): (StoreStatistics, WriterStatistics)
        do {
            (store, writer) = try await engine.statistics()
        } catch {
            throw Self.serviceError(error)
        }
        let ingest = counters.withLock { $0 }
        let config = engine.configuration
        var body: [String: Any] = [
            "database": config.path, "db_bytes": store.databaseBytes, "wal_bytes": store.walBytes, "free_bytes": store.freeBytes,
            "events": store.events, "topics": store.topics, "payload_bytes": store.payloadBytes,
            "oldest_stored_us": store.oldestStoredMicros.map { $0 as Any } ?? NSNull(),
            "newest_stored_us": store.newestStoredMicros.map { $0 as Any } ?? NSNull(),
            "commits": writer.commits, "committed_events": writer.committedEvents, "duplicates": writer.duplicates,
            "last_commit_us": writer.lastCommitMicros.map { $0 as Any } ?? NSNull(),
            "last_commit_duration_us": writer.lastCommitDuration.map { Self.micros($0) as Any } ?? NSNull(),
            "last_batch": writer.lastBatch, "largest_batch": writer.largestBatch,
            "queue": ["depth": writer.queueDepth, "capacity": writer.queueCapacity],
            "write_errors": writer.writeErrors,
            "failing_since_us": writer.failingSinceMicros.map { $0 as Any } ?? NSNull(),
            "gaps": [
                "detected": ingest.gapsDetected, "missed_events": ingest.missedEvents, "healed": ingest.healed,
                "resyncs": ingest.resyncs, "unattributed_losses": ingest.unattributedLosses, "kernel_refills": ingest.kernelRefills,
            ],
            "ready": ingest.subscribed && ingest.catchUpDone,
            "ingest": [
                "subscribed": ingest.subscribed, "received": ingest.received, "queued": ingest.queued, "duplicates_skipped": ingest.duplicatesSkipped,
                "catch_up": ingest.catchUpDone ? "done" : "pending", "catch_up_values": ingest.catchUpValues,
            ],
            "corrupt_records": ingest.corruptRecords,
            "compactions": writer.compactions,
            "retention": config.retention.description, "durability": config.durability.rawValue, "check": config.check.rawValue,
            "started_us": startedMicros, "pid": Int(getpid()), "instance": bus.instance,
        ]
        body["last_error"] =
            writer.lastErrorCode.map { code -> Any in
                ["code": code, "message": writer.lastError ?? "", "time_us": writer.lastErrorMicros ?? 0]
            } ?? NSNull()
        body["last_compact"] =
            writer.lastCompact.map { result -> Any in
                [
                    "deleted": result.deleted, "topics": result.topics, "bytes_before": result.bytesBefore, "bytes_after": result.bytesAfter,
                    "time_us": writer.lastCompactMicros ?? 0,
                ]
            } ?? NSNull()
        body["quarantined"] = engine.quarantine.map { ["moved_to": $0.movedTo, "problems": $0.problems] as Any } ?? NSNull()
        return try Self.json(body)
    }

    func compact() async throws -> [UInt8] {
        let started = ContinuousClock.now
        do {
            let result = try await engine.compact()
            return try Self.json([
                "deleted": result.deleted, "topics": result.topics, "bytes_before": result.bytesBefore, "bytes_after": result.bytesAfter,
                "took_ms": Self.micros(ContinuousClock.now - started) / 1000,
            ])
        } catch {
            throw Self.serviceError(error)
        }
    }

    // MARK: helpers

    /// A stored event as JSON: the fields of `bus.retained` (so `RetainedValue.from` reads it),
    /// plus `id` (the history cursor), `stored_us` and `origin`.
    static func object(_ event: StoredEvent) -> [String: Any] {
        var object = RetainedValue(topic: event.topic, meta: event.meta, payload: event.payload).jsonObject()
        object["id"] = event.id
        object["stored_us"] = event.storedMicros
        object["origin"] = event.origin.description
        return object
    }

    static func json(_ object: [String: Any]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    static func validate(topic: String) throws {
        do {
            try Topic.validate(topic)
        } catch {
            throw ServiceError(400, "invalid_topic", error.description)
        }
    }

    static func limit(_ value: Int?, default fallback: Int, max: Int) throws -> Int {
        guard let value else { return fallback }
        guard value >= 1 else { throw ServiceError.badRequest("limit must be at least 1, got \(value)") }
        return Swift.min(value, max)
    }

    static func serviceError(_ error: any Error) -> ServiceError {
        guard let error = error as? PersistError else {
            if let error = error as? ServiceError { return error }
            return ServiceError(500, "internal", "\(error)")
        }
        switch error {
        case .corruptRecord, .corruptDatabase: return ServiceError(500, error.code, error.description)
        case .overloaded, .closed: return ServiceError(503, error.code, error.description)
        case .invalidArgument: return ServiceError(400, error.code, error.description)
        case .unsupportedSchema: return ServiceError(500, error.code, error.description)
        case .sqlite(let inner): return ServiceError(inner.isFull || inner.isReadOnly ? 503 : 500, inner.kind, inner.description)
        }
    }
}
