import Bus
import BusTestSupport
import Foundation

/// One fault run: the stack up, the clients working while the nemesis runs its schedule, then
/// a crash of everything, a restart, and the checks.
struct ChaosRun {
    let options: ChaosOptions
    /// Progress lines (standard error with `--json`, else standard output).
    let log: @Sendable (String) -> Void

    func run() async throws -> Summary {
        let work =
            options.workDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("bus-chaos-\(options.seed)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let durationMs = History.ms(options.duration)
        let plan = FaultPlan.make(seed: options.seed, durationMs: durationMs, network: options.net, interval: options.faultInterval)
        log("[chaos] seed \(options.seed), \(String(format: "%.1f", Double(durationMs) / 60_000)) min, work folder \(work.path)")
        for step in plan {
            log("[plan]    \(FaultStep.seconds(step.atMs))  " + step.faults.map(\.label).joined(separator: " + "))
        }

        let namespaces = Sandbox.namespaces
        if options.net && namespaces == nil { throw ChaosFailure("--net: the run is not inside its network namespaces") }
        let stack = try Stack(options: options, work: work, namespaces: namespaces)
        var volume: PersistVolume?
        var volumeMissing = options.sandboxMissing
        if volumeMissing == nil {
            do {
                volume = try await PersistVolume.mount(at: stack.persistState, megabytes: options.persistFilesystemMB)
            } catch {
                volumeMissing = "cannot mount a tmpfs for persist: \(error)"
            }
        }
        if let volumeMissing {
            log("[chaos] disk-full faults will be SKIPPED: \(volumeMissing)")
        } else {
            log("[chaos] persist's data directory is a \(options.persistFilesystemMB) MiB tmpfs of the run's own")
        }
        if let namespaces {
            log("[chaos] the kernel runs in network namespace \(namespaces.name(1)) (\(namespaces.address(1))), the rest in \(namespaces.name(2))")
        }
        let faults = FaultSetup(volume: volume, volumeMissing: volumeMissing, namespaces: namespaces)
        do {
            let summary = try await run(stack: stack, plan: plan, work: work, durationMs: durationMs, faults: faults)
            await stack.shutdown()
            await volume?.saveAndUnmount(to: work.appendingPathComponent("state/persist-volume"))
            return summary
        } catch {
            await stack.shutdown()
            await volume?.saveAndUnmount(to: work.appendingPathComponent("state/persist-volume"))
            throw error
        }
    }

    /// What the nemesis needs beyond the stack for the faults of kinds that need support.
    struct FaultSetup {
        var volume: PersistVolume?
        var volumeMissing: String?
        var namespaces: NetworkNamespaces?
    }

    private func run(stack: Stack, plan: [FaultStep], work: URL, durationMs: Int, faults: FaultSetup) async throws -> Summary {
        try await stack.start()
        log("[chaos] stack up: kernel on \(stack.endpoints.requests), logs in \(work.appendingPathComponent("logs").path)")
        let history = History(file: work.appendingPathComponent("history.jsonl"))
        defer { history.close() }
        let watch = ResourceWatch(
            processes: [stack.kernel] + Stack.services.map { stack.process($0) }, history: history,
            file: work.appendingPathComponent("resources.jsonl"), every: options.sampleEvery)
        watch.start()
        let workload = Workload(stack: stack, history: history, seed: options.seed)
        let setup = stack.client("chaos-setup")
        defer { Task { await setup.close() } }

        // Signed in, the run's calendar imported, events acting as the signed-in user.
        await workload.signIn(setup, name: "setup")
        let user = try await Self.signedInUser(setup)
        let ics = try JSONEncoder().encode(["ics": Workload.calendar()])
        guard
            await Stack.until(
                .seconds(20),
                {
                    (try? await setup.call("events", "import", payload: Array(ics), timeout: .seconds(5))).map { Status.isSuccess($0.status) } == true
                })
        else { throw ChaosFailure("events did not import the run's calendar") }
        guard
            await Stack.until(
                .seconds(15),
                {
                    guard let reply = try? await setup.call("events", "mine", payload: Array("{}".utf8), timeout: .seconds(2)), reply.status == 200
                    else { return false }
                    struct Mine: Decodable { var user: String? }
                    return (try? JSONDecoder().decode(Mine.self, from: Data(reply.payload)))?.user == user
                })
        else { throw ChaosFailure("events did not see \(user) sign in") }
        let initial = try await readState(setup, user: user)

        let observers = Observers(stack: stack)
        try await observers.start()
        let nemesis = Nemesis(
            stack: stack, history: history, plan: plan, volume: faults.volume, volumeMissing: faults.volumeMissing, namespaces: faults.namespaces)
        let base = history.nowMs
        log("[chaos] clients working for \(durationMs / 1000) s")
        let clients = Task { await workload.run() }
        try await nemesis.run(base: base, until: durationMs, log: log)
        let remaining = base + durationMs - history.nowMs
        if remaining > 0 { try? await Task.sleep(for: .milliseconds(remaining)) }
        workload.stop()
        await clients.value
        log("[chaos] clients stopped after \(history.all.count) operations; waiting for the bus to settle")

        var failures: [String] = []
        if await !Stack.until(.seconds(60), { await stack.whole() }) { failures.append("the bus was not whole 60 s after the clients stopped") }
        await observers.converge(timeout: .seconds(15))
        let behind = await persistBehind(setup, topics: ["weather.state", "events.index"] + (try await itemTopics(setup)))
        if !behind.isEmpty { failures.append("persist did not catch up with \(behind.joined(separator: ", ")) within 15 s") }

        await watch.stop()
        log("[chaos] SIGKILL of every process, then a restart")
        try await stack.crashAndRestart()
        let final = try await readState(setup, user: user)
        let burstMissing = try await missingCommitted(setup, nemesis.commits)
        await observers.stop()
        await nemesis.stop()

        let operations = history.all
        let verdicts = Checker.registers(history: operations, initial: initial, final: final)
        for verdict in verdicts where verdict.verdict != "ok" {
            log(
                "[check] \(verdict.key): \(verdict.verdict): initial \(verdict.initial), last acknowledged \(verdict.lastAcknowledged ?? "-"), final \(verdict.final)"
            )
        }
        let votesMissing = Checker.votesMissing(history: operations, redditLog: stack.redditLog)
        let late = Checker.late(history: operations, slack: options.lateSlack)
        for call in late.prefix(10) { log("[check] late: \(call.op) took \(call.endMs - call.startMs) ms, deadline \(call.deadlineMs) ms") }
        let streams = observers.results
        let records = nemesis.done
        try JSONEncoder().encode(verdicts).write(to: work.appendingPathComponent("verdicts.json"))
        try JSONEncoder().encode(records).write(to: work.appendingPathComponent("faults.json"))
        try JSONEncoder().encode(streams).write(to: work.appendingPathComponent("observed.json"))

        var byKind: [String: Int] = [:]
        var recoveryByKind: [String: Int] = [:]
        for record in records {
            for fault in record.faults {
                byKind[fault.kind.rawValue, default: 0] += 1
                if let ms = record.recoveryMs { recoveryByKind[fault.kind.rawValue] = max(recoveryByKind[fault.kind.rawValue] ?? 0, ms) }
            }
        }
        let diskFulls = records.compactMap(\.diskFull)
        let resources = ResourceBounds.growth(watch.samples, run: options.duration)
        let count = { (verdict: String) in verdicts.filter { $0.verdict == verdict }.count }
        var summary = Summary(
            seed: options.seed, minutes: Double(durationMs) / 60_000, secure: options.secure, faultsByKind: byKind, faultSteps: records.count,
            operations: operations.count, ok: operations.filter { $0.outcome == .ok }.count,
            failed: operations.filter { $0.outcome == .failed }.count, unknown: operations.filter { $0.outcome == .unknown }.count,
            acknowledgedWrites: operations.filter { $0.outcome == .ok }.count, keysChecked: verdicts.count, lost: count("lost"),
            stale: count("stale"), unexplained: count("unexplained"), votesMissing: votesMissing, lateCalls: late.count,
            burstPublished: nemesis.commits.publishedCount, burstCommitted: nemesis.commits.acknowledged.values.reduce(0) { $0 + $1.count },
            burstMissing: burstMissing, observeStreams: streams.count, observeDuplicates: streams.reduce(0) { $0 + $1.duplicates },
            observeGaps: streams.reduce(0) { $0 + $1.gaps }, observeStartedBehind: streams.filter(\.startedBehind).count,
            observeNotConverged: streams.filter { $0.converged == false }.count,
            longestRecoveryMs: records.compactMap(\.recoveryMs).max(), unrecovered: records.filter { $0.recoveryMs == nil }.count,
            failures: failures, workDirectory: work.path, network: faults.namespaces != nil, longestRecoveryByKind: recoveryByKind,
            skipped: records.flatMap(\.skipped), diskFullFaults: diskFulls.count,
            diskFullReported: diskFulls.filter { $0.reportedAfterMs != nil }.count, diskFullPublished: diskFulls.reduce(0) { $0 + $1.published },
            resources: resources)
        if summary.lost > 0 { summary.failures.append("\(summary.lost) acknowledged write(s) lost") }
        if summary.unexplained > 0 { summary.failures.append("\(summary.unexplained) key(s) hold a value no write explains") }
        if votesMissing > 0 { summary.failures.append("\(votesMissing) acknowledged vote(s) never reached the upstream") }
        if burstMissing > 0 { summary.failures.append("\(burstMissing) committed event(s) missing from persist") }
        if !late.isEmpty { summary.failures.append("\(late.count) call(s) returned past their deadline") }
        if summary.observeDuplicates > 0 { summary.failures.append("observe delivered \(summary.observeDuplicates) duplicate(s)") }
        if summary.observeStartedBehind > 0 {
            summary.failures.append("\(summary.observeStartedBehind) observe stream(s) began with a value older than the current one")
        }
        if summary.observeNotConverged > 0 {
            summary.failures.append("\(summary.observeNotConverged) observe stream(s) did not reach the current value")
        }
        if summary.unrecovered > 0 { summary.failures.append("\(summary.unrecovered) fault(s) not recovered within 60 s") }
        for growth in resources where !growth.exceeded.isEmpty {
            summary.failures.append("\(growth.process) grew over \(growth.livedMs / 60_000) min: \(growth.exceeded.joined(separator: ", "))")
        }
        if summary.ok == 0 { summary.failures.append("no operation was acknowledged") }
        // A crash fails the run even when the restarts hid it.
        for name in ["kernel"] + Stack.services { summary.failures += stack.process(name).crashes() }
        return summary
    }

    static func signedInUser(_ client: BusClient) async throws -> String {
        struct State: Decodable { var state: String; var user: String? }
        let reply = try await client.call("auth", "state", payload: Array("{}".utf8), timeout: .seconds(5))
        guard reply.status == 200, let state = try? JSONDecoder().decode(State.self, from: Data(reply.payload)), let user = state.user else {
            throw ChaosFailure("auth is not signed in after the first sign-in: \(String(decoding: reply.payload, as: UTF8.self))")
        }
        return user
    }
}
