import Foundation

/// The run's result: what `--json` prints and the table shows.
struct Summary: Codable, Sendable {
    var seed: UInt64
    var minutes: Double
    var secure: Bool
    var faultsByKind: [String: Int]
    var faultSteps: Int
    var operations: Int
    var ok: Int
    var failed: Int
    var unknown: Int
    /// Writes answered 2xx (every operation of the clients is a write).
    var acknowledgedWrites: Int
    var keysChecked: Int
    /// Acknowledged writes not in the state read after the final crash and restart.
    var lost: Int
    var stale: Int
    var unexplained: Int
    var votesMissing: Int
    var lateCalls: Int
    var burstPublished: Int
    var burstCommitted: Int
    /// Events `persist.committed` listed that its history did not hold after the restarts.
    var burstMissing: Int
    var observeStreams: Int
    var observeDuplicates: Int
    var observeGaps: Int
    /// Streams whose first value was older than the value the kernel held when they began.
    var observeStartedBehind: Int
    var observeNotConverged: Int
    var longestRecoveryMs: Int?
    var unrecovered: Int
    var failures: [String]
    var workDirectory: String
    /// The kernel in a network namespace of its own, its link cut and slowed (`--net`).
    var network: Bool
    /// The longest recovery of the steps each kind of fault was in.
    var longestRecoveryByKind: [String: Int]
    /// Faults not injected, each with the reason (`disk-full: a mount namespace ... needs root`).
    var skipped: [String]
    var diskFullFaults: Int
    /// Full disks persist reported (`persist.error` with `disk_full`): its writes failed.
    var diskFullReported: Int
    /// Retained events published while persist's disk was full.
    var diskFullPublished: Int
    /// Per process, the first and last window of its longest-lived instance.
    var resources: [ResourceGrowth]

    var passed: Bool { failures.isEmpty }

    /// Two columns, one line per figure.
    var table: String {
        let kinds = FaultKind.allCases.filter { network || ($0 != .linkCut && $0 != .slowLink) }
            .map { "\($0.rawValue) \(faultsByKind[$0.rawValue] ?? 0)" }.joined(separator: ", ")
        let recoveries = FaultKind.allCases.compactMap { kind in
            longestRecoveryByKind[kind.rawValue].map { "\(kind.rawValue) " + String(format: "%.1f s", Double($0) / 1000) }
        }.joined(separator: ", ")
        let reasons = Set(
            skipped.map { $0.split(separator: ":", maxSplits: 1).map(String.init) }.map {
                ($0.count == 2 ? $0[1] : $0[0]).trimmingCharacters(in: .whitespaces)
            })
        let skippedText = skipped.isEmpty ? "0" : "\(skipped.count) (" + reasons.sorted().joined(separator: "; ") + ")"
        let recoveryText = recoveries.isEmpty ? "-" : recoveries
        var rows: [(String, String)] = [
            ("seed", "\(seed)"),
            ("minutes", String(format: "%.1f", minutes)),
            ("security", secure ? "CURVE" : "off"),
            ("network namespaces", network ? "on (the kernel's link cut and slowed)" : "off"),
            ("fault steps", "\(faultSteps)"),
            ("faults by kind", kinds),
            ("operations", "\(operations) (ok \(ok), failed \(failed), unknown \(unknown))"),
            ("acknowledged writes", "\(acknowledgedWrites)"),
            ("keys checked", "\(keysChecked)"),
            ("lost", "\(lost)"),
            ("stale (unknown applied late)", "\(stale)"),
            ("unexplained", "\(unexplained)"),
            ("votes missing upstream", "\(votesMissing)"),
            ("burst events published", "\(burstPublished)"),
            ("run's events committed / missing after", "\(burstCommitted) / \(burstMissing) (burst and disk-full events persist acknowledged)"),
            ("disk full: faults / persist failed / events", "\(diskFullFaults) / \(diskFullReported) / \(diskFullPublished)"),
            ("skipped faults", skippedText),
            ("calls past deadline", "\(lateCalls)"),
            ("observe: streams / duplicates / gaps", "\(observeStreams) / \(observeDuplicates) / \(observeGaps)"),
            ("observe: began behind / not converged", "\(observeStartedBehind) / \(observeNotConverged)"),
            ("longest recovery", longestRecoveryMs.map { String(format: "%.2f s", Double($0) / 1000) } ?? "-"),
            ("longest recovery by kind", recoveryText),
            ("unrecovered faults", "\(unrecovered)"),
        ]
        for growth in resources {
            let verdict = growth.judged ? (growth.exceeded.isEmpty ? " (within bounds)" : " EXCEEDED") : " (not judged: short)"
            rows.append(("resources: \(growth.process)", growth.figure + verdict))
        }
        rows += [
            ("result", passed ? "PASS" : "FAIL: " + failures.joined(separator: "; "))
        ]
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n")
    }
}
