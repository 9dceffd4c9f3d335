import Bus
import Foundation

/// After a kernel restart the kernel's retained store is empty while `persist` still holds every
/// topic's latest value: `persist` watches the kernel's instance (`bus.ping` `pid` and
/// `started_us`) and, whenever it sees one it has not refilled, hands it every saved value with
/// its original meta (`bus.refill`). The kernel keeps only values of topics it has no value
/// for, so refilling a kernel that did not lose anything changes nothing, and a value published
/// since the restart (a provisional one included) is never replaced. The first refill waits for
/// the catch-up at start: what the kernel holds then is read into the history first.
extension PersistServer {
    /// Saved values per `restore` page, and roughly the most payload bytes per `bus.refill`
    /// call (base64 makes them a third bigger; the frame limit is 1 MiB).
    static let refillPage = 200
    static let refillBatchBytes = 256 << 10

    /// Checks the kernel's instance every `interval` and refills each new one.
    func refillNewKernels(every interval: Duration = .seconds(1)) async {
        var refilled: String?
        while !Task.isCancelled {
            if counters.withLock({ $0.catchUpDone }), let instance = await kernelInstance(), instance != refilled,
                await refillKernel()
            {
                refilled = instance
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// `pid-started_us` of the kernel answering now, nil when it does not answer.
    private func kernelInstance() async -> String? {
        guard let reply = try? await bus.call("bus", "ping", timeout: .seconds(1)), reply.status == 200,
            let object = try? JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any],
            let pid = (object["pid"] as? NSNumber)?.intValue, let started = (object["started_us"] as? NSNumber)?.uint64Value
        else { return nil }
        return "\(pid)-\(started)"
    }

    /// Sends every saved latest value to the kernel; false when something failed (retried at
    /// the next check).
    private func refillKernel() async -> Bool {
        var after: String?
        var stored = 0
        var sent = 0
        do {
            while true {
                let page = try await engine.restore(prefix: "", after: after, limit: Self.refillPage)
                var batch: [[String: Any]] = []
                var bytes = 0
                for event in page {
                    var object = RetainedValue(topic: event.topic, meta: event.meta, payload: event.payload).jsonObject()
                    // The exact bytes: an embedded JSON payload would come back re-serialized.
                    object["payload"] = nil
                    object["payload_b64"] = Data(event.payload).base64EncodedString()
                    if !batch.isEmpty, bytes + event.payload.count > Self.refillBatchBytes {
                        stored += try await sendRefill(batch)
                        batch.removeAll()
                        bytes = 0
                    }
                    batch.append(object)
                    bytes += event.payload.count
                    sent += 1
                }
                if !batch.isEmpty { stored += try await sendRefill(batch) }
                guard page.count == Self.refillPage, let last = page.last else { break }
                after = last.topic
            }
        } catch {
            logger.warning("could not refill the kernel's retained values; retrying", metadata: ["error": "\(error)"])
            return false
        }
        logger.info("refilled the kernel's retained values", metadata: ["sent": String(sent), "stored": String(stored)])
        counters.withLock { $0.kernelRefills += 1 }
        return true
    }

    private func sendRefill(_ values: [[String: Any]]) async throws -> Int {
        let payload = try JSONSerialization.data(withJSONObject: ["values": values])
        let reply = try await bus.call("bus", "refill", payload: Array(payload), timeout: .seconds(5))
        guard reply.status == 200 else {
            throw BusError.reply(status: reply.status, code: reply.errorBody.code, message: reply.errorBody.message)
        }
        let object = try? JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any]
        return (object?["stored"] as? NSNumber)?.intValue ?? 0
    }
}
