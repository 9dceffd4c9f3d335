import Bus
import BusTestSupport
import Foundation

/// One step of the schedule as it happened.
struct FaultRecord: Codable, Sendable {
    var plannedMs: Int
    var startedMs: Int
    var faults: [Fault]
    /// From the end of the step's faults (the kill, the SIGCONT, the exit after SIGTERM, the
    /// ballast removed, the link up or fast again) until the kernel and every service answered
    /// again, and after a full disk until persist also held every event written meanwhile; nil
    /// when that did not happen within 60 s.
    var recoveryMs: Int?
    /// What happened beyond the plan, one line per fault that says more (`persist reported
    /// disk_full`, ...).
    var notes: [String] = []
    /// Faults of the step that were not injected, with the reason (`disk-full: ...`).
    var skipped: [String] = []
    /// The step's full disk, when it had one.
    var diskFull: DiskFullOutcome?
}

/// One `disk-full` fault as it happened.
struct DiskFullOutcome: Codable, Sendable {
    var ballastBytes: Int
    /// From the filling until persist reported `disk_full`; nil when it did not within 10 s
    /// (it had room left in its write-ahead log, or no event reached it).
    var reportedAfterMs: Int?
    /// Retained events published while the disk was full.
    var published: Int
}

/// What injecting one fault did: when it ended, what must hold before it counts as recovered
/// (beyond the bus answering), what to note, or why it was skipped.
struct Injected: Sendable {
    var endMs: Int
    var recovered: (@Sendable () async -> Bool)?
    var note: String?
    var skipped: String?
    var diskFull: DiskFullOutcome?
}

/// Runs the schedule against the stack: one step at a time, each fault of a step at once,
/// restarting what it killed after 0.5 s (as `busctl up` does), and waits for the bus to be
/// whole again before the next step.
final class Nemesis: Sendable {
    let stack: Stack
    let history: History
    let plan: [FaultStep]
    let commits: CommitLog
    /// persist's own filesystem; nil when it could not be made (`volumeMissing` says why).
    let volume: PersistVolume?
    let volumeMissing: String?
    /// The kernel's namespace is host 1, the rest host 2 (`--net`).
    let namespaces: NetworkNamespaces?
    private let records = Locked<[FaultRecord]>([])

    /// The token bucket of a slow link: 1 Mbit/s, 32 kbit burst, at most 400 ms queued.
    static let slowLink = ["rate", "1mbit", "burst", "32kbit", "latency", "400ms"]
    static let pressureTopics = 10

    init(stack: Stack, history: History, plan: [FaultStep], volume: PersistVolume?, volumeMissing: String?, namespaces: NetworkNamespaces?) {
        self.stack = stack
        self.history = history
        self.plan = plan
        self.volume = volume
        self.volumeMissing = volumeMissing
        self.namespaces = namespaces
        commits = CommitLog(client: stack.client("chaos-burst"))
    }

    var done: [FaultRecord] { records.withLock { $0 } }

    /// Runs the steps due before `endMs` (of the history's clock).
    func run(base: Int, until durationMs: Int, log: @Sendable (String) -> Void) async throws {
        try await commits.start()
        for step in plan where step.atMs < durationMs {
            let wait = base + step.atMs - history.nowMs
            if wait > 0 { try? await Task.sleep(for: .milliseconds(wait)) }
            let started = history.nowMs
            log("[nemesis] \(FaultStep.seconds(started - base))  " + step.faults.map(\.label).joined(separator: " + "))
            let results = await withTaskGroup(of: Injected.self) { group in
                for fault in step.faults { group.addTask { await self.inject(fault) } }
                var all: [Injected] = []
                for await result in group { all.append(result) }
                return all
            }
            let ended = results.map(\.endMs).max() ?? history.nowMs
            for line in results.compactMap(\.skipped) { log("[nemesis]          SKIPPED \(line)") }
            for line in results.compactMap(\.note) { log("[nemesis]          \(line)") }
            let conditions = results.compactMap(\.recovered)
            let whole = await Stack.until(.seconds(60)) {
                guard await self.stack.whole() else { return false }
                for condition in conditions where await !condition() { return false }
                return true
            }
            let recovery = whole ? history.nowMs - ended : nil
            log("[nemesis]          recovered in " + (recovery.map { "\($0) ms" } ?? "NOT within 60 s"))
            let record = FaultRecord(
                plannedMs: step.atMs, startedMs: started - base, faults: step.faults, recoveryMs: recovery, notes: results.compactMap(\.note),
                skipped: results.compactMap(\.skipped), diskFull: results.compactMap(\.diskFull).first)
            records.withLock { $0.append(record) }
        }
    }

    /// Injects one fault; returns when it ended (history ms) and what else recovery needs.
    private func inject(_ fault: Fault) async -> Injected {
        switch fault.kind {
        case .kill:
            let process = stack.process(fault.target)
            await process.crash()
            let end = history.nowMs
            await restart(process)
            return Injected(endMs: end)
        case .pause:
            let process = stack.process(fault.target)
            process.signal(SIGSTOP)
            try? await Task.sleep(for: .milliseconds(fault.holdMs ?? 5_000))
            process.signal(SIGCONT)
            return Injected(endMs: history.nowMs)
        case .term:
            let process = stack.process(fault.target)
            await process.stop(grace: .seconds(5))
            let end = history.nowMs
            await restart(process)
            return Injected(endMs: end)
        case .killMidCommit:
            let process = stack.process(fault.target)
            await commits.burst(limit: 20_000, topics: 20) { await process.crash() }
            let end = history.nowMs
            await restart(process)
            return Injected(endMs: end)
        case .diskFull:
            return await fillDisk(hold: .milliseconds(fault.holdMs ?? 3_000))
        case .linkCut, .slowLink:
            guard let namespaces else {
                return Injected(endMs: history.nowMs, skipped: "\(fault.kind.rawValue): the run has no network namespaces (--net)")
            }
            do {
                if fault.kind == .linkCut {
                    try await namespaces.setLink(1, up: false)
                } else {
                    try await namespaces.shape(1, tbf: Self.slowLink)
                    try await namespaces.shape(2, tbf: Self.slowLink)
                }
            } catch {
                return Injected(endMs: history.nowMs, skipped: "\(fault.kind.rawValue): \(error)")
            }
            try? await Task.sleep(for: .milliseconds(fault.holdMs ?? 5_000))
            var failure: String?
            do {
                if fault.kind == .linkCut {
                    try await namespaces.setLink(1, up: true)
                } else {
                    try await namespaces.shape(1, tbf: nil)
                    try await namespaces.shape(2, tbf: nil)
                }
            } catch {
                failure = "\(fault.kind.rawValue): could not undo: \(error)"
            }
            return Injected(endMs: history.nowMs, note: failure)
        }
    }

    /// The ballast fills persist's filesystem; retained events keep coming until persist
    /// reports `disk_full` (10 s at most), for `hold` more; then the ballast goes. Recovered
    /// once persist holds the kernel's value of every topic written meanwhile (it committed
    /// what it kept in memory).
    private func fillDisk(hold: Duration) async -> Injected {
        guard let volume else {
            return Injected(endMs: history.nowMs, skipped: "disk-full: \(volumeMissing ?? "persist has no filesystem of its own")")
        }
        let before = commits.reports
        let ballast: Int
        do {
            ballast = try volume.fill()
        } catch {
            volume.drain()
            return Injected(endMs: history.nowMs, skipped: "disk-full: \(error)")
        }
        let publishedBefore = commits.pressureCount
        let pressure = commits.pressure(topics: Self.pressureTopics)
        let clock = ContinuousClock.now
        let reported = await Stack.until(.seconds(10)) { self.commits.reports.diskFullReports > before.diskFullReports }
        let failedAfter = ContinuousClock.now - clock
        try? await Task.sleep(for: hold)
        pressure.cancel()
        await pressure.value
        volume.drain()
        let end = history.nowMs
        let client = commits.client
        let topics = CommitLog.pressureTopics(Self.pressureTopics)
        let note =
            reported
            ? "disk-full: ballast \(ballast / 1_048_576) MiB; persist reported disk_full after \(History.ms(failedAfter)) ms"
            : "disk-full: ballast \(ballast / 1_048_576) MiB; persist did NOT report disk_full within 10 s"
        return Injected(
            endMs: end,
            recovered: {
                for topic in topics where await !ChaosRun.persistHolds(client, topic) { return false }
                return true
            }, note: note,
            diskFull: DiskFullOutcome(
                ballastBytes: ballast, reportedAfterMs: reported ? History.ms(failedAfter) : nil, published: commits.pressureCount - publishedBefore))
    }

    private func restart(_ process: ChildProcess) async {
        try? await Task.sleep(for: .milliseconds(500))
        do { try process.start() } catch { FileHandle.standardError.write(Data("[nemesis] could not restart \(process.name): \(error)\n".utf8)) }
    }

    func stop() async { await commits.stop() }
}
