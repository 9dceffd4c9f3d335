import BusTestSupport
import BusWire
import Foundation
import Testing

/// `busctl bench` runs and its JSON parses. Speed is never asserted here: numbers come from the
/// benchmark itself (docs/PERFORMANCE.md).
@Suite(.serialized)
struct BenchTests {
    @Test(arguments: [("pubsub", "io-thread"), ("reqrep", "io-thread"), ("reqrep", "pool"), ("memory", "io-thread")])
    func bench_runs_andPrintsEveryFigureWithItsRatio(scenario: String, executor: String) async throws {
        // The Swift raw path once per transport scenario: it is an extra line, the same code each time.
        let swiftRaw = executor == "io-thread" && scenario != "memory"
        let h = try Harness(secure: false)
        let result = try await h.busctl(
            ["bench", scenario, "--seconds", "0.2", "--runs", "1", "--executor", executor, "--json"] + (swiftRaw ? ["--swift-raw"] : []),
            timeout: .seconds(120))
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let figures = try #require(object["figures"] as? [[String: Any]])
        #expect(!figures.isEmpty)
        #expect(object["executor"] as? String == executor)
        for figure in figures {
            let name = figure["name"] as? String ?? "?"
            let bus = try #require(figure["bus"] as? [String: Any], "\(name) has no bus figure")
            #expect((bus["median"] as? Double ?? -1) >= 0)
            if scenario != "memory" {
                // Every transport figure has its C baseline and ratio, and the Swift raw path beside it.
                let baseline = try #require(figure["baseline"] as? [String: Any], "\(name) has no C baseline")
                #expect((baseline["median"] as? Double ?? 0) > 0, "\(name)")
                #expect(figure["ratio"] is Double, "\(name)")
                #expect((figure["swift_raw"] as? [String: Any] != nil) == swiftRaw, "\(name)")
            }
        }
        if scenario == "pubsub" {
            #expect(figures.allSatisfy { $0["lost_c"] is Int && $0["c_subscribers_cut"] is Int })
        }
        if scenario == "reqrep" {
            // At 64 in flight C also sends a bus request's frames: the target's baseline.
            let shaped = try #require(figures.first { $0["name"] as? String == "reqrep 64 in flight, 7/MDP frames" })
            #expect(shaped["frame_ceiling"] is Double)
            #expect(shaped["met"] is Bool)
        }
        #expect(result.stderr.contains("bench: "))  // the progress line
        await h.shutdown()
    }

    /// The driver `scripts/instructions-per-request` runs under callgrind: it makes its calls
    /// through a kernel and an echo service of its own and prints their count; bad arguments
    /// exit 64.
    @Test func busProfile_makesItsCalls_andBadArgumentsExit64() async throws {
        let profile = Binaries.path("BusProfile")
        let output = try await Command.run(profile, ["reqrep", "--calls", "20"], timeout: .seconds(60))
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"calls":20}"#)
        for arguments in [["reqrep"], ["pubsub", "--calls", "5"], ["reqrep", "--calls", "0"], ["reqrep", "--calls", "5", "--bogus", "1"]] {
            let error = await #expect(throws: CommandError.self) { try await Command.run(profile, arguments) }
            #expect(error?.description.contains("(exit 64)") == true, "\(arguments): \(String(describing: error))")
        }
    }

    @Test func bench_badArguments_exit64() async throws {
        let h = try Harness(secure: false)
        #expect(try await h.busctl(["bench", "nonsense"]).status == 64)
        #expect(try await h.busctl(["bench", "--seconds", "-1"]).status == 64)
        #expect(try await h.busctl(["bench", "reqrep", "--executor", "threads"]).status == 64)
        await h.shutdown()
    }
}
