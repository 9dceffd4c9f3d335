import Bus
import BusSupport
import BusTestSupport
import Foundation
import Testing

@testable import busctl

/// A `busctl up` process on free loopback ports supervising BusTestService under the given
/// names, with a temporary state folder. ``with(_:extra:_:)`` always stops it: SIGTERM to up
/// (which stops its children), then SIGKILL for any child of this session still alive.
final class UpSession: Sendable {
    let harness: Harness
    let up: TestProcess
    let stateDirectory: URL
    let names: [String]

    private init(harness: Harness, up: TestProcess, stateDirectory: URL, names: [String]) {
        self.harness = harness
        self.up = up
        self.stateDirectory = stateDirectory
        self.names = names
    }

    /// The arguments that make `busctl up` supervise BusTestService as each of `names`.
    static func serviceArguments(_ names: [String], extraArguments: String = "", executables: [String: String] = [:]) -> [String] {
        names.flatMap { name in
            ["--service", "\(name)=\(executables[name] ?? Binaries.testService)", "--service-args", "\(name)=--name \(name) \(extraArguments)"]
        }
    }

    /// Starts `busctl up` with BusTestService as each of `names` (and only those, plus the
    /// package services in `packageServices`), waits for its summary line, runs `body`, and
    /// stops everything.
    static func with(
        _ names: [String], packageServices: [String] = [], extra: [String] = [], serviceArguments extraArguments: String = "",
        executables: [String: String] = [:], environment: [String: String] = [:], _ body: (UpSession) async throws -> Void
    ) async throws {
        let only = (packageServices + names).joined(separator: ",")
        var attempt = 1
        while true {
            let harness = try Harness()
            let state = FileManager.default.temporaryDirectory.appendingPathComponent("swiftbus-up-\(UUID().uuidString)")
            let arguments =
                ["up", "--kernel", harness.kernelURL, "--state-dir", state.path, "--only", only]
                + serviceArguments(names, extraArguments: extraArguments, executables: executables) + extra
            let up: TestProcess
            do {
                up = try harness.spawn(Binaries.busctl, arguments, name: "up", environment: environment)
            } catch {
                await harness.shutdown()
                throw error
            }
            let session = UpSession(harness: harness, up: up, stateDirectory: state, names: names)
            let started = await eventually(timeout: .seconds(20)) { up.stdout.contains("services up") || !up.isRunning }
            if started, up.isRunning {
                try await session.run(body)
                return
            }
            let failure =
                "busctl up did not start (status \(up.exitStatus.map(String.init) ?? "running")); stdout:\n\(up.stdout)\nstderr:\n\(up.stderr)"
            await session.cleanUp()
            // The ports were free when picked, and taken before up's kernel bound them (another
            // test run in parallel): try others, as the harness does for its own kernels.
            if attempt < 3, up.stderr.contains("Address already in use") {
                attempt += 1
                continue
            }
            throw HarnessError(failure)
        }
    }

    private func run(_ body: (UpSession) async throws -> Void) async throws {
        do {
            try await body(self)
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }

    private func cleanUp() async {
        await harness.shutdown()
        // If up had to be SIGKILLed, its children are orphans: kill those of this session (their
        // command line names this session's kernel, so no other process is touched).
        for pid in Self.pids(in: up.stdout) where Self.commandLine(of: pid).contains(harness.kernelURL) {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
        }
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    static func pids(in text: String) -> [Int32] {
        text.matches(of: /pid (\d+)/).compactMap { Int32($0.output.1) }
    }

    static func commandLine(of pid: Int32) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return "" }
        return String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
    }

    /// The pid and instance of `name` from the last `[supervisor] NAME up pid N instance I` line.
    func upLine(_ name: String) -> (pid: Int32, instance: String)? {
        let pattern = try! Regex("\\[supervisor\\] \(name) +up +pid (\\d+) +instance (\\S+)")
        guard let match = up.stdout.matches(of: pattern).last,
            let pid = match.output[1].substring.flatMap({ Int32($0) }),
            let instance = match.output[2].substring
        else { return nil }
        return (pid, String(instance))
    }

    /// `supervisor.status`, decoded the way any client would.
    func status() async throws -> [String: SupervisedProcess] {
        struct Reply: Decodable { var processes: [SupervisedProcess] }
        let reply: Reply = try await harness.client().request("supervisor", "status", [String: String](), as: Reply.self)
        return Dictionary(uniqueKeysWithValues: reply.processes.map { ($0.name, $0) })
    }

    /// The instance of `name` with `pid` in bus.services, if registered.
    func registered(_ name: String, pid: Int32) async -> ServiceSnapshot.Instance? {
        ((try? await harness.instances(of: name)) ?? []).first { $0.pid == Int(pid) && !$0.draining }
    }
}

/// One entry of `supervisor.status` (the wire format, snake_case).
struct SupervisedProcess: Decodable, Sendable {
    var name: String
    var pid: Int32?
    var state: String
    var restarts: Int
    var since: String
    var binary: String
    var instance: String?
}

/// True when no process has this pid any more (reaped by its parent).
func isGone(_ pid: Int32) -> Bool {
    kill(pid, 0) == -1 && errno == ESRCH
}

@Suite(.serialized)
struct SupervisorTests {
    @Test func up_startsKernelAndServices_printsStatusLines_andPrefixedLogs() async throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("swiftbus-bin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        // persist is a package service; in an empty --bin-dir it is "not built".
        try await UpSession.with(["alpha", "beta"], packageServices: ["persist"], extra: ["--bin-dir", empty.path]) { s in
            let out = s.up.stdout
            #expect(out.contains("[supervisor] persist  not built: no PersistService in \(empty.path)"))
            #expect(try out.contains(Regex("\\[supervisor\\] kernel +up +pid \\d+ +\(s.harness.kernelURL)")))
            let alpha = try #require(s.upLine("alpha"))
            let beta = try #require(s.upLine("beta"))
            #expect(out.range(of: "] alpha ")!.lowerBound < out.range(of: "] beta ")!.lowerBound, "started in order")
            #expect(out.contains("[supervisor] 2 of 2 services up (1 not built)"))

            // The services are on the bus as the processes the status lines name.
            #expect(await s.registered("alpha", pid: alpha.pid)?.instance == alpha.instance)
            #expect(await s.registered("beta", pid: beta.pid)?.instance == beta.instance)
            let me: Identity = try await s.harness.client().request("beta", "whoami", [String: String]())
            #expect(me.pid == beta.pid)

            // Every child's lines come with its prefix.
            #expect(out.contains("[kernel] ") && out.contains("kernel listening"))
            #expect(try out.contains(Regex("\\[alpha\\] .*alpha running")))
            #expect(try out.contains(Regex("\\[beta\\] .*beta running")))

            // The supervisor is on the bus and lists every process.
            let status = try await s.status()
            #expect(Set(status.keys) == ["kernel", "alpha", "beta"])
            #expect(status.values.allSatisfy { $0.state == "up" && $0.restarts == 0 })
            #expect(status["alpha"]?.pid == alpha.pid)
            #expect(status["alpha"]?.instance == alpha.instance)
            #expect(status["alpha"]?.binary == Binaries.testService)

            // Each service got its own private state folder.
            let attributes = try FileManager.default.attributesOfItem(atPath: s.stateDirectory.appendingPathComponent("alpha").path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        }
    }

    @Test func sigkill_supervisedService_isRestarted_andServesAgain() async throws {
        try await UpSession.with(["alpha"]) { s in
            let first = try #require(s.upLine("alpha"))
            kill(first.pid, SIGKILL)
            let restarted = await eventually {
                guard let line = s.upLine("alpha"), line.pid != first.pid else { return false }
                return await s.registered("alpha", pid: line.pid) != nil
            }
            #expect(restarted, "no new alpha registered; stdout:\n\(s.up.stdout)")
            let second = try #require(s.upLine("alpha"))
            #expect(s.up.stdout.contains("[supervisor] alpha (pid \(first.pid)) was killed by signal 9 (SIGKILL); restarting in 0.5 s"))
            // The kernel cannot tell a SIGKILLed worker from a silent one: until its heartbeat
            // expires (3 s here) it may still route a request there (503 worker_lost). Once the
            // dead instance is gone, the new process serves.
            #expect(await eventually { ((try? await s.harness.instances(of: "alpha")) ?? []).map(\.pid) == [Int(second.pid)] })
            let me: Identity = try await s.harness.client().request("alpha", "whoami", [String: String]())
            #expect(me.pid == second.pid)
            let status = try await s.status()
            #expect(status["alpha"]?.restarts == 1)
            #expect(status["alpha"]?.pid == second.pid)
        }
    }

    /// Timing-heavy: under a sanitizer on two cores, four instrumented processes starting while
    /// requests stream starve each other past the default 3 s heartbeat expiry, so the sanitizer
    /// passes (BUS_TEST_TSAN=1, BUS_TEST_ASAN=1) run the whole deployment with a 3 s heartbeat
    /// (BUS_HEARTBEAT_MS, read by the kernel and every service: 9 s expiry).
    @Test func replace_underSteadyRequests_failsNone_andTheNewProcessServes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swiftbus-new-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let newBinary = folder.appendingPathComponent("BusTestService").path
        try FileManager.default.createSymbolicLink(atPath: newBinary, withDestinationPath: Binaries.testService)

        let slow = TestProcess.underSanitizer
        try await UpSession.with(["alpha"], serviceArguments: "--concurrency 4", environment: slow ? ["BUS_HEARTBEAT_MS": "3000"] : [:]) { s in
            let old = try #require(s.upLine("alpha"))
            let bus = s.harness.client()
            let results = Locked<[Result<Int32, BusError>]>([])
            let done = Locked(false)
            let load = Task {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            while !done.withLock({ $0 }) {
                                do throws(BusError) {
                                    let reply: Identity = try await bus.request("alpha", "sleep", ["ms": 20], timeout: .seconds(5))
                                    results.withLock { $0.append(.success(reply.pid)) }
                                } catch {
                                    results.withLock { $0.append(.failure(error)) }
                                }
                            }
                        }
                    }
                }
            }
            defer { done.withLock { $0 = true } }
            #expect(await eventually { results.withLock { $0.count } >= 120 })
            let replaced = try await s.harness.busctl(["replace", "alpha", "--binary", newBinary, "--timeout", "10"])
            let countAtReplace = results.withLock { $0.count }
            #expect(replaced.status == 0, "stderr: \(replaced.stderr)")
            #expect(replaced.stdout.hasPrefix("replaced alpha: pid \(old.pid) (drained, status 0) -> pid "))
            #expect(await eventually { results.withLock { $0.count } >= countAtReplace + 120 })
            done.withLock { $0 = true }
            await load.value

            let all = results.withLock { $0 }
            let failures = all.compactMap { if case .failure(let error) = $0 { return error } else { return nil } }
            #expect(
                failures.isEmpty,
                "failed requests: \(failures.prefix(5)); up's output:\n\(s.up.stdout.split(separator: "\n").suffix(60).joined(separator: "\n"))")
            #expect(all.count >= 240)
            let pids = all.compactMap { try? $0.get() }
            let status = try await s.status()
            let new = try #require(status["alpha"]?.pid)
            #expect(new != old.pid)
            #expect(status["alpha"]?.binary == newBinary)
            #expect(pids.first == old.pid)
            #expect(pids.last == new)
            #expect(Set(pids) == [old.pid, new])
            #expect(isGone(old.pid))
            let me: Identity = try await bus.request("alpha", "whoami", [String: String]())
            #expect(me.pid == new)
        }
    }

    @Test func replace_ofACrashLoopingService_runsTheNewBinary() async throws {
        try await UpSession.with(["broken"], executables: ["broken": "/bin/false"]) { s in
            #expect(s.up.stdout.contains(try Regex("\\[supervisor\\] broken +failed to register: pid \\d+ exited with status 1")))
            #expect(
                await eventually {
                    s.up.stdout.contains("[supervisor] broken (pid ") && s.up.stdout.contains("exited with status 1; restarting in 0.5 s")
                })
            let replaced = try await s.harness.busctl(["replace", "broken", "--binary", Binaries.testService])
            #expect(replaced.status == 0, "stderr: \(replaced.stderr)")
            #expect(try replaced.stdout.contains(Regex("^replaced broken: pid \\d+ \\(had already exited, status 1\\) -> pid \\d+ running ")))
            let status = try await s.status()
            let pid = try #require(status["broken"]?.pid)
            #expect(status["broken"]?.state == "up")
            #expect(status["broken"]?.binary == Binaries.testService)
            let me: Identity = try await s.harness.client().request("broken", "whoami", [String: String]())
            #expect(me.pid == pid)
        }
    }

    @Test func sigterm_toUp_stopsChildrenInReverseOrder_andExitsZero() async throws {
        try await UpSession.with(["alpha", "beta"]) { s in
            let status = try await s.status()
            let pids = try ["kernel", "alpha", "beta"].map { try #require(status[$0]?.pid) }
            let signalled = ContinuousClock.now
            s.up.signal(SIGTERM)
            let exit = await s.up.waitForExit(timeout: .seconds(10))
            #expect(exit == 0, "stderr: \(s.up.stderr)")
            #expect(ContinuousClock.now - signalled < .seconds(5))
            let out = s.up.stdout
            let beta = try #require(out.range(of: "[supervisor] stopped beta (pid \(pids[2])): exited with status 0"))
            let alpha = try #require(out.range(of: "[supervisor] stopped alpha (pid \(pids[1])): exited with status 0"))
            let kernel = try #require(out.range(of: "[supervisor] stopped kernel (pid \(pids[0])): exited with status 0"))
            #expect(beta.lowerBound < alpha.lowerBound && alpha.lowerBound < kernel.lowerBound)
            #expect(pids.allSatisfy(isGone))
        }
    }

    @Test func sigkill_toUp_childrenStopThemselves() async throws {
        try await UpSession.with(["alpha"]) { s in
            let status = try await s.status()
            let pids = try ["kernel", "alpha"].map { try #require(status[$0]?.pid) }
            s.up.signal(SIGKILL)
            #expect(await s.up.waitForExit(timeout: .seconds(5)) != nil)
            // Re-parented, each child notices within a fraction of a second and stops gracefully.
            let stopped = await eventually(timeout: .seconds(5)) { pids.allSatisfy(ParentWatch.hasEnded) }
            #expect(stopped, "still running: \(pids.filter { !ParentWatch.hasEnded($0) })")
        }
    }

    @Test func restartAndReplace_replyErrors_exitTwo_andKeepTheOldProcess() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swiftbus-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let silent = folder.appendingPathComponent("silent.sh").path
        try "#!/bin/sh\nexec sleep 30\n".write(toFile: silent, atomically: true, encoding: .utf8)
        chmod(silent, 0o755)

        try await UpSession.with(["alpha"]) { s in
            let first = try #require(s.upLine("alpha"))

            let restarted = try await s.harness.busctl(["restart", "alpha"])
            #expect(restarted.status == 0, "stderr: \(restarted.stderr)")
            let second = try #require(s.upLine("alpha"))
            #expect(second.pid != first.pid)
            #expect(restarted.stdout == "restarted alpha: pid \(first.pid) (status 0) -> pid \(second.pid), instance \(second.instance)\n")
            #expect(await s.registered("alpha", pid: second.pid) != nil)
            #expect(isGone(first.pid))

            let unknown = try await s.harness.busctl(["restart", "ghost"])
            #expect(unknown.status == 2)
            #expect(unknown.stderr.hasPrefix("error: supervisor.restart answered 404 unknown_service: no supervised service 'ghost'"))

            let kernel = try await s.harness.busctl(["restart", "kernel"])
            #expect(kernel.status == 2)
            #expect(kernel.stderr.contains("400 not_supported"))

            let missing = try await s.harness.busctl(["replace", "alpha", "--binary", "/nonexistent/BusTestService", "--json"])
            #expect(missing.status == 2)
            #expect(missing.stdout.contains(#""code":"bad_binary""#))
            #expect(missing.stdout.contains(#""status":400"#))

            let failing = try await s.harness.busctl(["replace", "alpha", "--binary", "/bin/false"])
            #expect(failing.status == 2)
            #expect(failing.stderr.contains("500 start_failed: the new alpha"))
            #expect(failing.stderr.contains("exited with status 1 before registering; pid \(second.pid) keeps serving"))

            let started = ContinuousClock.now
            let never = try await s.harness.busctl(["replace", "alpha", "--binary", silent, "--timeout", "1"])
            #expect(never.status == 2)
            #expect(never.stderr.contains("504 register_timeout"))
            #expect(ContinuousClock.now - started < .seconds(8))
            let candidate = try #require(UpSession.pids(in: never.stderr).first)
            #expect(candidate != second.pid)
            #expect(await eventually { isGone(candidate) }, "the process that did not register was not killed")

            // The old process kept serving throughout, with no restart.
            let me: Identity = try await s.harness.client().request("alpha", "whoami", [String: String]())
            #expect(me.pid == second.pid)
            let status = try await s.status()
            #expect(status["alpha"]?.pid == second.pid)
            #expect(status["alpha"]?.binary == Binaries.testService)
            #expect(status["alpha"]?.restarts == 1)
        }
    }

    @Test func restartAndReplace_withoutSupervisor_exitFour_withoutKernel_exitFive() async throws {
        try await Harness.with { h in
            let restart = try await h.busctl(["restart", "alpha"])
            #expect(restart.status == 4)
            #expect(restart.stderr.hasPrefix("error: no supervisor on the bus at \(h.kernelURL)"))
            let replace = try await h.busctl(["replace", "alpha", "--binary", Binaries.testService])
            #expect(replace.status == 4)
        }
        let nowhere = "tcp://127.0.0.1:\(FreePorts.kernelBase())"
        let h = try Harness()
        let unreachable = try await h.busctl(["restart", "alpha", "--kernel", nowhere])
        await h.shutdown()
        #expect(unreachable.status == 5)
        #expect(unreachable.stderr.hasPrefix("error: cannot reach the kernel at \(nowhere)"))
    }

    @Test func up_whenTheKernelPortIsTaken_exitsOne_andStartsNoService() async throws {
        try await Harness.with { h in
            let state = FileManager.default.temporaryDirectory.appendingPathComponent("swiftbus-up-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: state) }
            let result = try await h.busctl(
                ["up", "--kernel", h.kernelURL, "--state-dir", state.path, "--only", "alpha"] + UpSession.serviceArguments(["alpha"]),
                timeout: .seconds(15))
            #expect(result.status == 1)
            #expect(result.stderr.contains("error: the kernel did not start at \(h.kernelURL): "))
            #expect(result.stderr.contains("Address already in use"))
            #expect(!result.stdout.contains("[alpha]"))
            // The kernel that owns the port is untouched.
            #expect((try? await h.client().call("bus", "ping", timeout: .seconds(2)))?.status == 200)
        }
    }

    @Test(arguments: [
        (["up", "--only", "nope"], "--only: no service 'nope'"),
        (["up", "--service", "Alpha=/bin/true"], "the service name must be lowercase"),
        (["up", "--service", "alpha=/nonexistent/x"], "no executable file at /nonexistent/x"),
        (["up", "--service", "kernel=/bin/true"], "'kernel' is reserved"),
        (["up", "--service", "alpha"], "--service expects NAME=PATH"),
        (["up", "--service", "a=/bin/true", "--service-args", "a=--x 'y"], "unterminated '"),
        (["up", "--service-args", "zz=--x"], "no service 'zz'"),
        (["up", "--register-timeout", "0"], "--register-timeout must be above 0"),
        (["up", "extra"], "unexpected argument 'extra'"),
        (["restart"], "missing SERVICE"),
        (["restart", "a", "b"], "unexpected argument 'b'"),
        (["restart", "a", "--bogus"], "unknown option '--bogus'"),
        (["replace", "alpha"], "missing --binary PATH"),
        (["replace", "--binary", "/bin/true"], "missing SERVICE"),
        (["replace", "alpha", "--binary", "/bin/true", "--timeout", "soon"], "--timeout expects a non-negative number"),
    ])
    func badArguments_exit64_withOneLineAndUsage(_ arguments: [String], _ message: String) async throws {
        let h = try Harness()
        let result = try await h.busctl(arguments)
        await h.shutdown()
        #expect(result.status == 64)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("error: ") == true && lines.first?.contains(message) == true, "stderr: \(result.stderr)")
        #expect(lines.last?.hasPrefix("usage: busctl \(arguments[0]) ") == true)
    }
}

struct SupervisorUnitTests {
    @Test func backoff_doublesToTheMaximum_andResetsAfterALongUptime() {
        var backoff = Backoff()
        let delays = (0..<9).map { _ in backoff.delay(afterUptime: .seconds(1)) }
        #expect(
            delays == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30), .seconds(30),
            ])
        #expect(backoff.delay(afterUptime: .seconds(60)) == .milliseconds(500))
        #expect(backoff.delay(afterUptime: .seconds(59)) == .seconds(1))
    }

    @Test func shellWords_splitLikeAShell() throws {
        #expect(try ShellWords.split("--name alpha") == ["--name", "alpha"])
        #expect(try ShellWords.split("  a  'b c'  \"d \\\" e\" f\\ g ''") == ["a", "b c", "d \" e", "f g", ""])
        #expect(try ShellWords.split("") == [])
        #expect(throws: UsageError.self) { try ShellWords.split("'open") }
        #expect(throws: UsageError.self) { try ShellWords.split("trailing\\") }
    }

    @Test func processExit_decodesWaitStatus() {
        #expect(ProcessExit(waitStatus: 0) == .exited(0))
        #expect(ProcessExit(waitStatus: 1 << 8) == .exited(1))
        #expect(ProcessExit(waitStatus: SIGKILL) == .signalled(SIGKILL))
        #expect(ProcessExit(waitStatus: SIGKILL).description == "was killed by signal 9 (SIGKILL)")
    }
}
