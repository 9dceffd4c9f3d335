import BusSupport
import BusWire

extension Broker {
    /// Every service the broker knows, sorted by name, with its instances.
    public func snapshot(now: MonotonicTime) -> [ServiceSnapshot] {
        var names = Set(services.keys)
        for worker in workers.values { names.insert(worker.service) }
        return names.sorted().map { name in
            let service = services[name]
            let mine = workers.values.filter { $0.service == name }
            let byInstance = Dictionary(grouping: mine, by: { $0.info.instance })
            let instances = byInstance.keys.sorted().map { key -> ServiceSnapshot.Instance in
                let group = byInstance[key]!
                let info = group[0].info
                let registered = group.map(\.registered).min()!
                let lastSeen = group.map(\.lastSeen).max()!
                return ServiceSnapshot.Instance(
                    instance: key, version: info.version, host: info.host, pid: info.pid, workers: group.count,
                    uptimeMs: now.milliseconds(since: registered), heartbeatAgeMs: now.milliseconds(since: lastSeen),
                    handled: group.reduce(0) { $0 + $1.handled }, inFlight: group.reduce(0) { $0 + $1.inFlight.count },
                    failed: group.reduce(0) { $0 + $1.failed }, draining: group.allSatisfy(\.draining),
                    oneFrame: group.allSatisfy(\.readsOneFrame) ? true : nil,
                    binaryMeta: group.allSatisfy(\.readsBinaryMeta) ? true : nil,
                    late: isLate(lastSeen: lastSeen, now: now) ? true : nil)
            }
            return ServiceSnapshot(
                service: name, instances: instances, queued: service?.queue.count ?? 0,
                requests: service?.stats.requests ?? 0, errors: service?.stats.errors ?? 0,
                failed: service?.stats.failed ?? 0, p50Us: service?.stats.percentile(0.5),
                p99Us: service?.stats.percentile(0.99))
        }
    }

    /// Whether nothing was heard from an instance for more than one and a half heartbeat
    /// intervals: every worker sends one per interval, so at least one is missing.
    func isLate(lastSeen: MonotonicTime, now: MonotonicTime) -> Bool {
        now.nanoseconds(since: lastSeen) > config.heartbeatInterval.nanosecondsClamped(times: 3) / 2
    }

    /// Names of services with at least one worker that is not draining.
    public var liveServices: Set<String> {
        Set(workers.values.filter { !$0.draining }.map(\.service))
    }
}
