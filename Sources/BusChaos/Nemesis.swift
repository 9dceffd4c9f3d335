import Bus
import Foundation

/// One step of the schedule as it happened.
struct FaultRecord: Codable, Sendable {
    var plannedMs: Int
    var startedMs: Int
    var faults: [Fault]
    /// From the end of the step's faults (the kill, the SIGCONT, the exit after SIGTERM) until
    /// the kernel and every service answered again; nil when they did not within 60 s.
    var recoveryMs: Int?
}

/// Runs the schedule against the stack: one step at a time, each fault of a step at once,
/// restarting what it killed after 0.5 s (as `busctl up` does), and waits for the bus to be
/// whole again before the next step.
final class Nemesis: Sendable {
    let stack: Stack
    let history: History
    let plan: [FaultStep]
    let commits: CommitLog
    private let records = Locked<[FaultRecord]>([])

    init(stack: Stack, history: History, plan: [FaultStep]) {
        self.stack = stack
        self.history = history
        self.plan = plan
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
            let ended = await withTaskGroup(of: Int.self) { group in
                for fault in step.faults { group.addTask { await self.inject(fault) } }
                var last = 0
                for await end in group { last = max(last, end) }
                return last
            }
            let whole = await Stack.until(.seconds(60)) { await self.stack.whole() }
            let recovery = whole ? history.nowMs - ended : nil
            log("[nemesis]          recovered in " + (recovery.map { "\($0) ms" } ?? "NOT within 60 s"))
            records.withLock { $0.append(FaultRecord(plannedMs: step.atMs, startedMs: started - base, faults: step.faults, recoveryMs: recovery)) }
        }
    }

    /// Injects one fault; returns when it ended (history ms).
    private func inject(_ fault: Fault) async -> Int {
        let process = stack.process(fault.target)
        switch fault.kind {
        case .kill:
            await process.crash()
            let end = history.nowMs
            await restart(process)
            return end
        case .pause:
            process.signal(SIGSTOP)
            try? await Task.sleep(for: .milliseconds(fault.pauseMs ?? 5_000))
            process.signal(SIGCONT)
            return history.nowMs
        case .term:
            await process.stop(grace: .seconds(5))
            let end = history.nowMs
            await restart(process)
            return end
        case .killMidCommit:
            await commits.burst(limit: 20_000, topics: 20) { await process.crash() }
            let end = history.nowMs
            await restart(process)
            return end
        }
    }

    private func restart(_ process: ChildProcess) async {
        try? await Task.sleep(for: .milliseconds(500))
        do { try process.start() } catch { FileHandle.standardError.write(Data("[nemesis] could not restart \(process.name): \(error)\n".utf8)) }
    }

    func stop() async { await commits.stop() }
}
