import Bus
import BusTestSupport
import Foundation
import Testing

/// The short form of `scripts/chaos`: the whole stack under a fixed seed's faults for about a
/// minute, with every check of the long run (docs/RELIABILITY.md). Seed 64's 70 s schedule has
/// every kind of fault: kills (of the kernel too), pauses, SIGTERMs, persist killed mid-commit
/// and its disk full; with network namespaces (root), also a cut and a slow link.
@Suite(.serialized)
struct ChaosRunTests {
    struct Summary: Decodable {
        var faultSteps: Int
        var faultsByKind: [String: Int]
        var operations: Int
        var ok: Int
        var acknowledgedWrites: Int
        var lost: Int
        var unexplained: Int
        var votesMissing: Int
        var burstMissing: Int
        var lateCalls: Int
        var observeDuplicates: Int
        var longestRecoveryMs: Int?
        var failures: [String]
        var network: Bool
        var skipped: [String]
        var diskFullFaults: Int
        var diskFullReported: Int
    }

    @Test func faultRun_withFixedSeed_losesNoAcknowledgedWrite() async throws {
        // Under TSan every process is several times slower: a shorter run, more slack for
        // calls that end at their deadline.
        let tsan = ProcessInfo.processInfo.environment["BUS_TEST_TSAN"] == "1"
        let seconds = tsan ? 40 : 70
        var arguments = [
            "--seed", "64", "--seconds", "\(seconds)", "--json", "--bin-dir", Binaries.directory.path, "--root", Binaries.packageRoot.path,
        ]
        if Harness.securityByDefault { arguments.append("--secure") }
        // Network faults need root and `ip netns`; without them the run has none (and still passes).
        let network = NetworkNamespaces.unavailableReason == nil
        if network { arguments.append("--net") }
        if tsan { arguments += ["--late-slack-ms", "3000"] }
        let run = try TestProcess(Binaries.path("BusChaos"), arguments, name: "chaos")
        defer { run.signal(SIGTERM) }
        let status = await run.waitForExit(timeout: .seconds(seconds + 300))
        let tail = String(run.stderr.suffix(4000))
        #expect(status == 0, "BusChaos exited \(status.map(String.init) ?? "(still running)"):\n\(tail)")
        let line = try #require(run.stdout.split(separator: "\n").last, "no summary on stdout:\n\(tail)")
        let summary = try JSONDecoder().decode(Summary.self, from: Data(line.utf8))
        #expect(summary.lost == 0 && summary.unexplained == 0 && summary.votesMissing == 0 && summary.burstMissing == 0)
        #expect(summary.lateCalls == 0 && summary.observeDuplicates == 0)
        #expect(summary.failures.isEmpty, "\(summary.failures)")
        #expect(summary.faultSteps >= 3, "the schedule of seed 64 has a fault step at least every 12 s")
        #expect(summary.network == network)
        // The full disk needs root (a mount namespace and a tmpfs of the run's own); without it
        // the fault is skipped, and the run says why. (The 40 s run under TSan has none.)
        if !tsan { #expect(summary.faultsByKind["disk-full", default: 0] >= 1) }
        if getuid() != 0 {
            #expect(summary.skipped.contains { $0.hasPrefix("disk-full:") }, "\(summary.skipped)")
        } else if !tsan {
            #expect(summary.diskFullFaults >= 1, "skipped: \(summary.skipped)")
        }
        #expect(summary.diskFullReported == summary.diskFullFaults, "persist's writes did not fail while its disk was full")
        if network {
            #expect(summary.faultsByKind["link-cut", default: 0] >= 1 && summary.faultsByKind["slow-link", default: 0] >= 1)
        }
        #expect(summary.acknowledgedWrites >= 50, "the clients did real work: \(summary.acknowledgedWrites) writes acknowledged")
    }
}
