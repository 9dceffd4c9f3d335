import BusSupport
import BusWire
import BusZMQ
import Foundation

/// The kernel's own service, `bus`: methods answered on the serving thread from the broker's and
/// the event plane's state.
extension KernelLoop {
    func answerKernelRequest(_ frames: Frames) -> ReplyBody {
        let body: RequestBody
        do {
            body = try RequestBody.decode(frames)
        } catch {
            return .error(400, code: "malformed", message: error.description, id: nil, from: "kernel")
        }
        let id = body.meta.id
        let params: [String: Any]
        if body.payload.isEmpty {
            params = [:]
        } else if let object = try? JSONSerialization.jsonObject(with: Data(body.payload)) as? [String: Any] {
            params = object
        } else {
            return .error(400, code: "invalid_json", message: "the payload of bus.\(body.method) is not a JSON object", id: id, from: "kernel")
        }
        let result: Result<Any, ErrorBody>
        switch body.method {
        case "ping":
            result = .success([
                "pong": true, "libzmq": ZMQContext.version, "uptime_ms": MonotonicTime.now.milliseconds(since: started),
                "pid": Int(ProcessInfo.processInfo.processIdentifier), "started_us": startedMicros,
            ])
        case "services":
            result = .success(["services": jsonArray(broker.snapshot(now: .now))])
        case "retained":
            result = retained(params)
        case "stats":
            result = stats(params)
        case "refill":
            result = refill(params)
        case "reload":
            if let guardian {
                let change = guardian.reloadIfChanged(now: .now, force: true)
                revoke(change?.removed ?? [])
                result = .success([
                    "added": change?.added ?? [], "removed": change?.removed ?? [],
                    "identities": Set(guardian.authorized.values).sorted(),
                ])
            } else {
                result = .failure(ErrorBody(code: "security_off", message: "the kernel runs without --keys: there are no keys to reload"))
            }
        default:
            result = .failure(
                ErrorBody(
                    code: "no_such_method",
                    message: "the kernel service 'bus' has no method '\(body.method)' (try ping, services, retained, stats, reload, refill)"))
        }
        switch result {
        case .success(let value):
            let data = ReplyJSON.encode(value) ?? Array("{}".utf8)
            return ReplyBody(status: 200, meta: ReplyMeta(id: id, from: "kernel"), payload: data)
        case .failure(let error):
            let status = error.code == "not_found" || error.code == "no_such_method" ? 404 : (error.code == "security_off" ? 409 : 400)
            return .error(status, code: error.code, message: error.message, id: id, from: "kernel")
        }
    }

    /// Puts saved retained values back after a kernel restart (what `persist` does when it sees
    /// a new kernel instance): each value, with its original meta, is kept only when the kernel
    /// has no value for its topic (a value published since the restart is the live one, whatever
    /// its seq), and then goes out as a snapshot to the subscribers of its topic (the ones that
    /// have it drop it by its seq). With security only the `persist` identity may call it
    /// (``KernelGuard/checkRequest(_:identity:)``).
    private func refill(_ params: [String: Any]) -> Result<Any, ErrorBody> {
        guard let list = params["values"] as? [Any] else {
            return .failure(
                ErrorBody(code: "invalid_request", message: "bus.refill takes {\"values\": [retained value…]} as bus.retained answers them"))
        }
        var stored = 0
        var kept = 0
        for object in list {
            guard let value = try? RetainedValue.from(jsonObject: object), (try? Topic.validate(value.topic)) != nil else {
                return .failure(ErrorBody(code: "invalid_request", message: "bus.refill: a value is not a retained value with a valid topic"))
            }
            var meta = value.meta
            meta.flags = meta.flags.subtracting([.snapshot, .repeated]).union(.retained)
            let metaBytes = meta.encode()
            if events.retained[value.topic] == nil,
                events.retain(topic: value.topic, meta: metaBytes, payload: value.payload, seq: meta.seq, reset: false)
            {
                stored += 1
                var snapshot = metaBytes
                snapshot[1] |= EventMeta.Flags.snapshot.rawValue
                if !sendOwn([Array(value.topic.utf8), snapshot, value.payload]) { events.totalDrops += 1 }
            } else {
                kept += 1
            }
        }
        if stored > 0 { logger.info("retained values refilled", metadata: ["stored": String(stored), "kept": String(kept)]) }
        return .success(["stored": stored, "kept": kept])
    }

    func jsonArray<T: Encodable>(_ value: T) -> Any {
        guard let data = try? JSONEncoder.bus.encode(value),
            let object = try? JSONSerialization.jsonObject(with: data)
        else { return [] }
        return object
    }
}
