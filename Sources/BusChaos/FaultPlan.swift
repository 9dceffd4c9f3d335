import Foundation

/// What the nemesis does to one process.
enum FaultKind: String, Codable, Sendable, CaseIterable {
    /// SIGKILL, then a restart (as `busctl up` restarts a process that died).
    case kill
    /// SIGSTOP for longer than the heartbeat expiry, then SIGCONT.
    case pause
    /// SIGTERM while the clients are working (the process drains, exits, and is started again).
    case term
    /// A burst of retained events and a SIGKILL of `persist` while it commits them.
    case killMidCommit = "kill-mid-commit"
}

/// One fault on one process.
struct Fault: Codable, Sendable, Equatable {
    var kind: FaultKind
    var target: String
    /// How long a pause lasts.
    var pauseMs: Int?

    var label: String {
        switch kind {
        case .pause: "pause \(target) \(pauseMs ?? 0) ms"
        default: "\(kind.rawValue) \(target)"
        }
    }
}

/// Faults injected together at one moment of the run.
struct FaultStep: Codable, Sendable, Equatable {
    /// From the start of the clients' work.
    var atMs: Int
    var faults: [Fault]

    /// `ms` as right-aligned seconds with one decimal (`  12.5 s`).
    static func seconds(_ ms: Int) -> String {
        let text = String(format: "%.1f s", Double(ms) / 1000)
        return String(repeating: " ", count: max(0, 8 - text.count)) + text
    }
}

/// The nemesis's schedule, a function of the seed and the run's length only.
enum FaultPlan {
    /// Every process the nemesis may hit.
    static let targets = ["kernel", "persist", "auth", "feed", "weather", "events"]

    /// A step every 6-12 s from 5 s on, until 8 s before the end; about one in five steps
    /// carries a second fault on another process. Pauses last 4-6 s: above the 3 s heartbeat
    /// expiry (1 s heartbeat, liveness 3).
    static func make(seed: UInt64, durationMs: Int) -> [FaultStep] {
        var random = SeededRandom(seed: seed)
        var steps: [FaultStep] = []
        var at = 5_000
        while at < durationMs - 8_000 {
            var faults = [fault(&random, excluding: [])]
            if Int.random(in: 0..<5, using: &random) == 0 {
                faults.append(fault(&random, excluding: Set(faults.map(\.target))))
            }
            steps.append(FaultStep(atMs: at, faults: faults))
            at += Int.random(in: 6_000...12_000, using: &random)
        }
        return steps
    }

    private static func fault(_ random: inout SeededRandom, excluding: Set<String>) -> Fault {
        let roll = Int.random(in: 0..<100, using: &random)
        let kind: FaultKind = roll < 40 ? .kill : roll < 65 ? .pause : roll < 90 ? .term : .killMidCommit
        if kind == .killMidCommit, !excluding.contains("persist"), !excluding.contains("kernel") {
            return Fault(kind: .killMidCommit, target: "persist")
        }
        let candidates = targets.filter { !excluding.contains($0) }
        let target = candidates[Int.random(in: 0..<candidates.count, using: &random)]
        let realKind = kind == .killMidCommit ? FaultKind.kill : kind
        return Fault(kind: realKind, target: target, pauseMs: realKind == .pause ? Int.random(in: 4_000...6_000, using: &random) : nil)
    }
}
