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
    /// `persist`'s filesystem filled by a ballast file while retained events keep coming, held,
    /// then the ballast removed (needs the run's mount namespace: root).
    case diskFull = "disk-full"
    /// The kernel's network link down, then up again (`--net`).
    case linkCut = "link-cut"
    /// The kernel's network link slowed to 1 Mbit/s both ways by a token bucket (`--net`).
    case slowLink = "slow-link"

    /// Whether the fault lasts `holdMs` (a pause, a full disk, a cut or slow link).
    var holds: Bool { self == .pause || self == .diskFull || self == .linkCut || self == .slowLink }
}

/// One fault on one process.
struct Fault: Codable, Sendable, Equatable {
    var kind: FaultKind
    var target: String
    /// How long a pause, a full disk, a cut or a slow link lasts.
    var holdMs: Int?

    var label: String {
        switch kind {
        case .linkCut, .slowLink: "\(kind.rawValue) \(holdMs ?? 0) ms"
        case _ where kind.holds: "\(kind.rawValue) \(target) \(holdMs ?? 0) ms"
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

/// The nemesis's schedule, a function of the seed, the run's length and the options that add or
/// space faults (`--net`, `--fault-interval`) only.
enum FaultPlan {
    /// Every process the nemesis may hit.
    static let targets = ["kernel", "persist", "auth", "feed", "weather", "events"]
    /// The target of the network faults: the kernel's link to everything else.
    static let link = "link"

    /// A step every 6-12 s (`interval`) from 5 s on, until 8 s before the end; about one in five
    /// steps carries a second fault on another target. Pauses last 4-6 s: above the 3 s
    /// heartbeat expiry (1 s heartbeat, liveness 3); a full disk is held 2-4 s once persist
    /// failed to write, a cut link 2-8 s, a slow link 5-10 s.
    static func make(seed: UInt64, durationMs: Int, network: Bool = false, interval: ClosedRange<Int> = 6_000...12_000) -> [FaultStep] {
        var random = SeededRandom(seed: seed)
        var steps: [FaultStep] = []
        var at = 5_000
        while at < durationMs - 8_000 {
            var faults = [fault(&random, excluding: [], network: network)]
            if Int.random(in: 0..<5, using: &random) == 0 {
                faults.append(fault(&random, excluding: Set(faults.map(\.target)), network: network))
            }
            steps.append(FaultStep(atMs: at, faults: faults))
            at += Int.random(in: interval, using: &random)
        }
        return steps
    }

    /// The kind by a roll of 0..<100: without `--net` kill 36, pause 22, term 22,
    /// kill-mid-commit 10, disk-full 10; with it kill 30, pause 18, term 18, kill-mid-commit 10,
    /// disk-full 8, link-cut 8, slow-link 8.
    static func kind(roll: Int, network: Bool) -> FaultKind {
        let weights: [(FaultKind, Int)] =
            network
            ? [(.kill, 30), (.pause, 18), (.term, 18), (.killMidCommit, 10), (.diskFull, 8), (.linkCut, 8), (.slowLink, 8)]
            : [(.kill, 36), (.pause, 22), (.term, 22), (.killMidCommit, 10), (.diskFull, 10)]
        var bound = 0
        for (kind, weight) in weights {
            bound += weight
            if roll < bound { return kind }
        }
        return .kill
    }

    private static func fault(_ random: inout SeededRandom, excluding: Set<String>, network: Bool) -> Fault {
        let kind = kind(roll: Int.random(in: 0..<100, using: &random), network: network)
        switch kind {
        case .killMidCommit where !excluding.contains("persist") && !excluding.contains("kernel"):
            return Fault(kind: .killMidCommit, target: "persist")
        case .diskFull where !excluding.contains("persist"):
            return Fault(kind: .diskFull, target: "persist", holdMs: Int.random(in: 2_000...4_000, using: &random))
        case .linkCut where !excluding.contains(link):
            return Fault(kind: .linkCut, target: link, holdMs: Int.random(in: 2_000...8_000, using: &random))
        case .slowLink where !excluding.contains(link):
            return Fault(kind: .slowLink, target: link, holdMs: Int.random(in: 5_000...10_000, using: &random))
        default:
            break
        }
        // A process fault (a special kind whose target is taken falls back to a kill).
        let candidates = targets.filter { !excluding.contains($0) }
        let target = candidates[Int.random(in: 0..<candidates.count, using: &random)]
        let processKind = kind == .pause || kind == .term ? kind : .kill
        return Fault(kind: processKind, target: target, holdMs: processKind == .pause ? Int.random(in: 4_000...6_000, using: &random) : nil)
    }
}
