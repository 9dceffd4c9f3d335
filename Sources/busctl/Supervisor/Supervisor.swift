import Bus
import Foundation

/// Runs the kernel and the services of `busctl up` as child processes: starts them in order
/// and waits until each has registered, restarts a crashed one with back-off, restarts and
/// replaces one on request (`supervisor.restart`, `supervisor.replace`), and stops them all in
/// reverse order.
///
/// Every change to a process goes through this actor. An operation in progress on a process
/// (start, restart, replace) marks it busy; its exits are then handled by the operation, not by
/// the crash handler. Whoever stops a process on purpose claims its exit first
/// (``ChildProcess/claim()``), so an exit leads to at most one restart.
actor Supervisor {
    struct Settings: Sendable {
        var endpoints: Endpoints
        /// How long a process has to register (the kernel: to answer bus.ping).
        var registerTimeout: Duration = .seconds(10)
        /// How long a process has to exit after SIGTERM before SIGKILL.
        var stopTimeout: Duration = .seconds(3)
        var backoff = Backoff()
        /// How often to look at bus.services while waiting for a registration.
        var pollInterval: Duration = .milliseconds(100)
        /// The width status lines pad names to (at least the longest supervised name).
        var nameWidth = 0
    }

    enum Phase: String, Sendable {
        case starting, up, unregistered, restarting, stopping, stopped, failed
    }

    enum Operation: String, Sendable {
        case start, restart, replace
    }

    /// One supervised name and the process that currently runs it.
    struct Unit {
        var spec: ProgramSpec
        let isKernel: Bool
        var process: ChildProcess?
        var instance: String?
        var phase: Phase = .stopped
        var since = Date()
        var restarts = 0
        var backoff: Backoff
        /// Bumped whenever a scheduled restart must no longer happen.
        var generation = 0
        var operation: Operation?
        var retry: Task<Void, Never>?
        /// A restart is scheduled (``retry`` will start the process unless cancelled).
        var restartPending = false
        var lastExit: ProcessExit?
    }

    /// The outcome of waiting for a process to register.
    enum Readiness: Sendable {
        case ready(instance: String?)
        case exited(ProcessExit)
        case timeout
        case cancelled
    }

    let settings: Settings
    let printer: LogPrinter
    let bus: BusClient
    private let order: [String]
    private let width: Int
    private var units: [String: Unit] = [:]
    /// New processes of a replace that have not registered yet.
    private var candidates: [pid_t: ChildProcess] = [:]
    private var stopping = false
    private var handle: ServiceHandle?

    init(kernel: ProgramSpec, services: [ProgramSpec], settings: Settings, printer: LogPrinter, bus: BusClient) {
        self.settings = settings
        self.printer = printer
        self.bus = bus
        order = [kernel.name] + services.map(\.name)
        width = max(settings.nameWidth, order.map(\.count).max() ?? 0)
        units[kernel.name] = Unit(spec: kernel, isKernel: true, backoff: settings.backoff)
        for spec in services {
            units[spec.name] = Unit(spec: spec, isKernel: false, backoff: settings.backoff)
        }
    }

    var kernelName: String { order[0] }
    var serviceNames: [String] { Array(order.dropFirst()) }

    // MARK: start

    /// Starts the kernel and waits until it answers bus.ping.
    /// - Throws: ``CommandFailure`` (exit 1) saying why it did not start, e.g. the port is in use.
    func startKernel() async throws(CommandFailure) {
        let name = kernelName
        units[name]!.operation = .start
        defer { finishOperation(name) }
        let child: ChildProcess
        do {
            child = try launch(name)
        } catch {
            throw CommandFailure("cannot start the kernel: \(error)")
        }
        let result = await waitReady(name, child, before: [], timeout: settings.registerTimeout)
        switch result {
        case .ready:
            units[name]!.phase = .up
            status(
                name,
                "up      pid \(child.pid)  \(settings.endpoints.requests) (events in \(settings.endpoints.eventsIn), out \(settings.endpoints.eventsOut))"
            )
        case .exited(let exit):
            _ = child.claim()
            beginShutdown()
            units[name]!.phase = .failed
            let reason =
                child.lastLines.last(where: { !$0.isEmpty }).map {
                    Self.stripErrorPrefix($0).replacingOccurrences(of: "cannot start the kernel: ", with: "")
                } ?? "it \(exit)"
            throw CommandFailure("the kernel did not start at \(settings.endpoints.requests): \(reason)")
        case .timeout:
            beginShutdown()
            _ = await child.forceKill()
            units[name]!.phase = .failed
            throw CommandFailure(
                "the kernel (pid \(child.pid)) did not answer bus.ping at \(settings.endpoints.requests) within \(Self.seconds(settings.registerTimeout)) s; stopped it"
            )
        case .cancelled:
            _ = await child.stop(grace: settings.stopTimeout)
            units[name]!.phase = .stopped
            throw CommandFailure("interrupted while starting the kernel")
        }
    }

    /// Serves the `supervisor` service on the bus.
    func serveOnBus() throws(BusError) {
        handle = try bus.serve(SupervisorService.make(self))
    }

    /// Starts every service in order, each after the previous one registered or failed to.
    func startServices() async {
        for name in serviceNames {
            if stopping { return }
            await startService(name)
        }
    }

    /// How many services are registered now (for the summary line).
    var servicesUp: Int { serviceNames.filter { units[$0]?.phase == .up }.count }

    private func startService(_ name: String) async {
        units[name]!.operation = .start
        defer { finishOperation(name) }
        let before = await currentInstances(name)
        guard !stopping else { return }
        let child: ChildProcess
        do {
            child = try launch(name)
        } catch {
            status(name, "failed to start: \(error)")
            units[name]!.phase = .failed
            scheduleRestart(name, pid: nil, reason: "could not be started", uptime: .zero)
            return
        }
        report(name, child, await waitReady(name, child, before: before, timeout: settings.registerTimeout))
    }

    // MARK: crash handling

    /// Called (through a task) after any child process ended.
    func exited(_ child: ChildProcess, _ exit: ProcessExit) {
        candidates.removeValue(forKey: child.pid)
        guard let name = order.first(where: { units[$0]?.process === child }) else { return }
        units[name]!.lastExit = exit
        guard !stopping, units[name]!.operation == nil, child.claim() else { return }
        scheduleRestart(name, pid: child.pid, reason: exit.description, uptime: child.uptime)
    }

    private func scheduleRestart(_ name: String, pid: pid_t?, reason: String, uptime: Duration) {
        guard !stopping, var unit = units[name] else { return }
        let delay = unit.backoff.delay(afterUptime: uptime)
        unit.phase = .restarting
        unit.since = Date()
        unit.instance = nil
        unit.generation += 1
        unit.retry?.cancel()
        unit.restartPending = true
        let generation = unit.generation
        unit.retry = Task {
            try? await Task.sleep(for: delay)
            if Task.isCancelled { return }
            await self.restartAfterBackoff(name, generation: generation)
        }
        units[name] = unit
        let who = pid.map { "\(name) (pid \($0))" } ?? name
        printer.supervisor("\(who) \(reason); restarting in \(Self.seconds(delay)) s")
    }

    private func restartAfterBackoff(_ name: String, generation: Int) async {
        guard !stopping, let unit = units[name], unit.generation == generation else { return }
        units[name]!.restartPending = false
        // An operation in progress (restart, replace) decides what runs; it schedules a restart
        // when it ends with nothing running.
        guard unit.operation == nil, unit.process?.isRunning != true else { return }
        units[name]!.operation = .restart
        defer { finishOperation(name) }
        units[name]!.restarts += 1
        let before = unit.isKernel ? [] : await currentInstances(name)
        guard !stopping else { return }
        let child: ChildProcess
        do {
            child = try launch(name)
        } catch {
            status(name, "failed to start: \(error)")
            units[name]!.phase = .failed
            scheduleRestart(name, pid: nil, reason: "could not be started", uptime: .zero)
            return
        }
        report(name, child, await waitReady(name, child, before: before, timeout: settings.registerTimeout))
    }

    /// Ends an operation. If the process it left has meanwhile exited and nobody claimed that,
    /// or if nothing runs and no restart is scheduled (a failed replace of a crashed service),
    /// restarts it with back-off.
    private func finishOperation(_ name: String) {
        units[name]?.operation = nil
        guard !stopping, let unit = units[name] else { return }
        if let child = unit.process, let exit = child.exitStatus, child.claim() {
            units[name]!.lastExit = exit
            scheduleRestart(name, pid: child.pid, reason: exit.description, uptime: child.uptime)
        } else if unit.process?.isRunning != true, !unit.restartPending {
            scheduleRestart(name, pid: nil, reason: "is not running", uptime: .zero)
        }
    }

    /// Cancels a scheduled restart (an operation takes over).
    private func cancelRestart(_ name: String) {
        units[name]?.retry?.cancel()
        units[name]?.retry = nil
        units[name]?.restartPending = false
        units[name]?.generation += 1
    }

    // MARK: restart and replace

    /// `supervisor.restart`: SIGTERM (the service drains), wait for the exit, start it again.
    func restart(_ name: String) async throws(ServiceError) -> SupervisorAPI.ChangeReply {
        try checkOperable(name)
        units[name]!.operation = .restart
        defer { finishOperation(name) }
        cancelRestart(name)
        var oldPid: Int?
        var oldExit: ProcessExit?
        var oldStopped = false
        if let old = units[name]!.process {
            oldPid = Int(old.pid)
            if old.isRunning {
                oldStopped = true
                units[name]!.phase = .stopping
                printer.supervisor("restarting \(name): stopping pid \(old.pid)")
                oldExit = await old.stop(grace: settings.stopTimeout).exit
            } else {
                _ = old.claim()
                oldExit = old.exitStatus
            }
            units[name]!.lastExit = oldExit
        }
        guard !stopping else { throw ServiceError.unavailable("the supervisor is shutting down") }
        let before = await currentInstances(name)
        guard !stopping else { throw ServiceError.unavailable("the supervisor is shutting down") }
        let child: ChildProcess
        do {
            child = try launch(name)
        } catch {
            units[name]!.phase = .failed
            scheduleRestart(name, pid: nil, reason: "could not be started", uptime: .zero)
            throw ServiceError(500, "start_failed", "cannot start \(name) again: \(error)")
        }
        units[name]!.restarts += 1
        units[name]!.backoff.reset()
        let result = await waitReady(name, child, before: before, timeout: settings.registerTimeout)
        report(name, child, result)
        switch result {
        case .ready(let instance):
            return SupervisorAPI.ChangeReply(
                service: name, oldPid: oldPid, oldExit: oldExit?.summary, oldStopped: oldStopped, pid: Int(child.pid),
                instance: instance ?? "", binary: child.spec.executable)
        case .exited(let exit):
            throw ServiceError(
                500, "start_failed",
                "\(name) was restarted but the new process (pid \(child.pid)) \(exit) before registering\(Self.lastOutput(child)); it will be restarted with back-off"
            )
        case .timeout:
            throw ServiceError(
                504, "register_timeout",
                "\(name) was restarted (pid \(child.pid)) but did not register within \(Self.seconds(settings.registerTimeout)) s; it keeps running")
        case .cancelled:
            throw ServiceError.unavailable("the supervisor is shutting down")
        }
    }

    /// `supervisor.replace`: start `binary` with the same arguments, wait until its new
    /// instance registered, then SIGTERM the old process (it drains: DISCONNECT, in-flight
    /// requests answered, exit). The new process is supervised from then on, restarts included.
    /// If it does not register within `timeout`, it is killed and the old one keeps serving.
    func replace(_ name: String, binary: String, timeout: Duration?) async throws(ServiceError) -> SupervisorAPI.ChangeReply {
        try checkOperable(name)
        guard binary.hasPrefix("/") else {
            throw ServiceError(400, "bad_binary", "the binary must be an absolute path, got '\(binary)'")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: binary, isDirectory: &isDirectory), !isDirectory.boolValue,
            FileManager.default.isExecutableFile(atPath: binary)
        else {
            throw ServiceError(400, "bad_binary", "no executable file at \(binary)")
        }
        let timeout = timeout ?? settings.registerTimeout
        units[name]!.operation = .replace
        defer { finishOperation(name) }
        cancelRestart(name)
        let old = units[name]!.process
        let oldText =
            old.flatMap { $0.isRunning ? "pid \($0.pid) keeps serving" : nil }
            ?? "the old process is not running and will be restarted with back-off"
        var spec = units[name]!.spec
        spec.executable = binary
        let before = await currentInstances(name)
        guard !stopping else { throw ServiceError.unavailable("the supervisor is shutting down") }
        let candidate: ChildProcess
        do {
            candidate = try spawn(spec)
        } catch {
            throw ServiceError(500, "start_failed", "cannot start the new \(name): \(error); \(oldText) keeps serving")
        }
        candidates[candidate.pid] = candidate
        let oldState = old.map { "pid \($0.pid)\($0.isRunning ? "" : ", not running")" } ?? "not running"
        printer.supervisor("replacing \(name) (\(oldState)) with \(binary) (pid \(candidate.pid))")
        let result = await waitReady(name, candidate, before: before, timeout: timeout)
        candidates.removeValue(forKey: candidate.pid)
        switch result {
        case .ready(let instance):
            units[name]!.spec = spec
            units[name]!.process = candidate
            units[name]!.instance = instance
            units[name]!.phase = .up
            units[name]!.since = candidate.startedAt
            units[name]!.backoff.reset()
            var oldExit: ProcessExit?
            var drained = false
            if let old {
                if old.isRunning {
                    drained = true
                    printer.supervisor("\(name): pid \(candidate.pid) registered as \(instance ?? "?"); draining pid \(old.pid)")
                    oldExit = await old.stop(grace: settings.stopTimeout).exit
                } else {
                    _ = old.claim()
                    oldExit = old.exitStatus
                }
                units[name]!.lastExit = oldExit
            }
            printer.supervisor(
                "replaced \(name): pid \(candidate.pid) (\(binary)) serves; old pid \(old.map { String($0.pid) } ?? "-") \(oldExit?.description ?? "was not running")"
            )
            return SupervisorAPI.ChangeReply(
                service: name, oldPid: old.map { Int($0.pid) }, oldExit: oldExit?.summary, oldStopped: drained,
                pid: Int(candidate.pid), instance: instance ?? "", binary: binary)
        case .exited(let exit):
            _ = candidate.claim()
            printer.supervisor("replacing \(name) failed: the new process (pid \(candidate.pid)) \(exit) before registering; \(oldText)")
            throw ServiceError(
                500, "start_failed",
                "the new \(name) (pid \(candidate.pid), \(binary)) \(exit) before registering\(Self.lastOutput(candidate)); \(oldText)")
        case .timeout:
            _ = await candidate.forceKill()
            printer.supervisor(
                "replacing \(name) failed: pid \(candidate.pid) did not register within \(Self.seconds(timeout)) s; killed it; \(oldText)")
            throw ServiceError(
                504, "register_timeout",
                "the new \(name) (pid \(candidate.pid), \(binary)) did not register within \(Self.seconds(timeout)) s; killed it, \(oldText)")
        case .cancelled:
            _ = await candidate.stop(grace: settings.stopTimeout)
            throw ServiceError.unavailable("the supervisor is shutting down")
        }
    }

    private func checkOperable(_ name: String) throws(ServiceError) {
        guard let unit = units[name] else {
            throw ServiceError(404, "unknown_service", "no supervised service '\(name)' (supervised: \(serviceNames.joined(separator: ", ")))")
        }
        guard !unit.isKernel else {
            throw ServiceError(
                400, "not_supported", "the kernel carries this request and cannot be restarted or replaced through it; restart 'busctl up' instead")
        }
        guard !stopping else { throw ServiceError.unavailable("the supervisor is shutting down") }
        if let operation = unit.operation {
            throw ServiceError.conflict("\(name) is busy (\(operation.rawValue) in progress); try again when it is done")
        }
    }

    // MARK: status

    /// `supervisor.status`: every supervised process.
    func status() async -> SupervisorAPI.StatusReply {
        let services = try? await bus.services(timeout: .seconds(1))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let processes = order.compactMap { name -> SupervisorAPI.ProcessStatus? in
            guard let unit = units[name] else { return nil }
            let running = unit.process.flatMap { $0.isRunning ? $0 : nil }
            var instance: String?
            let state: String
            if unit.operation == .replace {
                state = "replacing"
                instance = unit.instance
            } else if let running {
                if unit.isKernel {
                    state = unit.phase == .stopping ? "stopping" : "up"
                } else if unit.phase == .stopping {
                    state = "stopping"
                } else if let live = services?.first(where: { $0.service == name })?.instances.first(where: { $0.pid == Int(running.pid) }) {
                    state = "up"
                    instance = live.instance
                } else if unit.operation != nil {
                    state = "starting"
                } else if services == nil, unit.phase == .up {
                    // bus.services did not answer: the last thing known.
                    state = "up"
                    instance = unit.instance
                } else {
                    state = "unregistered"
                }
            } else {
                switch unit.phase {
                case .restarting: state = "restarting"
                case .failed: state = "failed"
                case .stopped, .stopping: state = "stopped"
                default: state = "exited"
                }
            }
            return SupervisorAPI.ProcessStatus(
                name: name, pid: running.map { Int($0.pid) }, state: state, restarts: unit.restarts,
                since: formatter.string(from: running?.startedAt ?? unit.since), binary: unit.spec.executable,
                instance: instance, lastExit: unit.lastExit?.summary)
        }
        return SupervisorAPI.StatusReply(processes: processes)
    }

    // MARK: stop

    /// Stops restarting and starting anything; operations in progress give up.
    func beginShutdown() {
        stopping = true
        for name in order { units[name]?.retry?.cancel() }
    }

    /// Leaves the bus as the `supervisor` service (answers what it already got).
    func leaveBus() async {
        await handle?.drain()
        handle = nil
    }

    /// Stops every service in reverse start order (SIGTERM, then SIGKILL after the stop
    /// timeout), then whatever a replace had started.
    func stopServices() async {
        for name in serviceNames.reversed() { await stop(name) }
        for candidate in candidates.values {
            _ = await candidate.stop(grace: settings.stopTimeout)
        }
        candidates.removeAll()
    }

    /// Stops the kernel (last).
    func stopKernel() async {
        await stop(kernelName)
    }

    /// SIGKILLs every process now (a second Ctrl-C).
    func killAll() {
        for name in order { units[name]?.process?.killGroup() }
        for candidate in candidates.values { candidate.killGroup() }
    }

    private func stop(_ name: String) async {
        guard let child = units[name]?.process, child.isRunning else {
            units[name]?.phase = .stopped
            return
        }
        units[name]!.phase = .stopping
        let began = ContinuousClock.now
        let (exit, killed) = await child.stop(grace: settings.stopTimeout)
        units[name]!.lastExit = exit
        units[name]!.phase = .stopped
        units[name]!.since = Date()
        let how = exit?.description ?? "did not exit"
        let note = killed ? " (no exit within \(Self.seconds(settings.stopTimeout)) s of SIGTERM: SIGKILL)" : ""
        printer.supervisor("stopped \(name) (pid \(child.pid)): \(how) after \(Self.seconds(ContinuousClock.now - began)) s\(note)")
    }

    // MARK: helpers

    private func spawn(_ spec: ProgramSpec) throws(SpawnError) -> ChildProcess {
        guard !stopping else { throw SpawnError(description: "the supervisor is shutting down") }
        let printer = self.printer
        let name = spec.name
        return try ChildProcess.spawn(
            spec, onLine: { printer.child(name, $0) },
            onExit: { child, exit in Task { await self.exited(child, exit) } })
    }

    /// Starts the unit's program as its current process.
    private func launch(_ name: String) throws(SpawnError) -> ChildProcess {
        let child = try spawn(units[name]!.spec)
        units[name]!.process = child
        units[name]!.instance = nil
        units[name]!.phase = .starting
        units[name]!.since = child.startedAt
        return child
    }

    /// Waits until `child` registered as `name` (the kernel: answers bus.ping), exited, the
    /// deadline passed, or shutdown began.
    private func waitReady(_ name: String, _ child: ChildProcess, before: Set<String>, timeout: Duration) async -> Readiness {
        let deadline = ContinuousClock.now + timeout
        let isKernel = units[name]?.isKernel ?? false
        while true {
            if stopping { return .cancelled }
            if let exit = child.exitStatus { return .exited(exit) }
            if isKernel {
                if await kernelAnswers(child) { return .ready(instance: nil) }
            } else if let instance = await registeredInstance(name, child, before: before) {
                return .ready(instance: instance)
            }
            if ContinuousClock.now >= deadline {
                return child.exitStatus.map(Readiness.exited) ?? .timeout
            }
            try? await Task.sleep(for: settings.pollInterval)
        }
    }

    /// True when bus.ping is answered by `child` and not by another kernel already bound to
    /// the endpoint (ours will then fail to bind). The uptime comparison alone let a kernel
    /// started less than 100 ms before ours pass for it (seen in a loaded parallel test run).
    private func kernelAnswers(_ child: ChildProcess) async -> Bool {
        guard let reply = try? await bus.call("bus", "ping", timeout: .milliseconds(300)), reply.status == Status.ok,
            let object = try? JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any]
        else { return false }
        // Another kernel on the same port (ours then fails with EADDRINUSE) answers too: only
        // ours has our child's pid. A kernel that sends no pid must be younger than our child.
        if let pid = (object["pid"] as? NSNumber)?.int32Value { return pid == child.pid }
        guard let uptime = (object["uptime_ms"] as? NSNumber)?.int64Value else { return true }
        let age = child.uptime.components
        return uptime <= age.seconds * 1000 + age.attoseconds / 1_000_000_000_000_000 + 100
    }

    /// The instance of `name` that `child` registered: the one with its pid, else (for workers
    /// that send no pid, or a wrapper script) a new instance whose pid is no other child's.
    private func registeredInstance(_ name: String, _ child: ChildProcess, before: Set<String>) async -> String? {
        guard let services = try? await bus.services(timeout: .seconds(1)) else { return nil }
        let instances = services.first { $0.service == name }?.instances.filter { !$0.draining } ?? []
        if let mine = instances.first(where: { $0.pid == Int(child.pid) }) { return mine.instance }
        var others = Set(order.compactMap { units[$0]?.process?.pid }.map(Int.init))
        others.formUnion(candidates.keys.map(Int.init))
        others.remove(Int(child.pid))
        return instances.first { !before.contains($0.instance) && !others.contains($0.pid ?? -1) }?.instance
    }

    private func currentInstances(_ name: String) async -> Set<String> {
        let services = (try? await bus.services(timeout: .seconds(1))) ?? []
        return Set(services.first { $0.service == name }?.instances.map(\.instance) ?? [])
    }

    /// Prints the status line of a start or restart.
    private func report(_ name: String, _ child: ChildProcess, _ result: Readiness) {
        switch result {
        case .ready(let instance):
            units[name]!.phase = .up
            units[name]!.instance = instance
            let restarts = units[name]!.restarts
            let took = Self.seconds(ContinuousClock.now - child.started)
            let what = units[name]!.isKernel ? "\(settings.endpoints.requests)  (answered in" : "instance \(instance ?? "?")  (registered in"
            status(name, "up      pid \(child.pid)  \(what) \(took) s\(restarts > 0 ? ", restart \(restarts)" : ""))")
        case .exited(let exit):
            // After a restart, the restart line that follows says it already.
            if units[name]!.restarts == 0 {
                status(name, "failed to register: pid \(child.pid) \(exit)\(Self.lastOutput(child))")
            }
        case .timeout:
            units[name]!.phase = .unregistered
            let what = units[name]!.isKernel ? "no answer to bus.ping" : "no instance of '\(name)' with pid \(child.pid) in bus.services"
            status(name, "failed to register: \(what) within \(Self.seconds(settings.registerTimeout)) s; it keeps running")
        case .cancelled:
            break
        }
    }

    /// `[supervisor] NAME  text`, the name padded so that status lines line up.
    private func status(_ name: String, _ text: String) {
        printer.supervisor(name.padding(toLength: max(width, name.count) + 2, withPad: " ", startingAt: 0) + text)
    }

    static func lastOutput(_ child: ChildProcess) -> String {
        guard let line = child.lastLines.last(where: { !$0.isEmpty }) else { return "" }
        return " (last output: \(stripErrorPrefix(String(line.prefix(300)))))"
    }

    static func stripErrorPrefix(_ line: String) -> String {
        line.hasPrefix("error: ") ? String(line.dropFirst(7)) : line
    }

    /// "0.5", "12.0": seconds with one decimal.
    static func seconds(_ duration: Duration) -> String {
        let (s, atto) = duration.components
        return String(format: "%.1f", Double(s) + Double(atto) / 1e18)
    }
}
