import Bus
import BusKernel
import BusWire
import Foundation

/// `busctl kernel`: runs the kernel in the foreground until SIGTERM or SIGINT.
struct KernelCommand: BusctlCommand {
    static let name = "kernel"
    static let overview = "Run the kernel (MDP broker and event forwarder) in the foreground."
    static let usage = "[--kernel URL] [options]"
    static let options =
        OptionSpec.common + [
            OptionSpec(
                "heartbeat-ms", value: "MS",
                help: "MDP heartbeat interval; workers silent for 3 intervals are dropped. Services read the same variable.",
                environment: "BUS_HEARTBEAT_MS", default: "1000"),
            OptionSpec("grace-ms", value: "MS", help: "How long a request without its own deadline waits for a worker.", default: "5000"),
            OptionSpec("max-message-bytes", value: "BYTES", help: "Largest accepted message; bigger ones disconnect the sender.", default: "1048576"),
            OptionSpec("max-retained", value: "N", help: "Most topics with a retained value.", default: "100000"),
            OptionSpec(
                "max-subscriptions", value: "N",
                help: "Most live subscriptions in all; more are refused (counted in bus.stats subscribing.refused).", default: "100000"),
            OptionSpec(
                "max-subscriptions-per-owner", value: "N",
                help: "Most live subscriptions of one identity (with --keys) or one peer address (without).", default: "10000"),
            OptionSpec("subscriber-hwm", value: "N", help: "Messages queued towards each subscriber.", default: "10000"),
            OptionSpec(
                "subscriber-grace-ms", value: "MS",
                help:
                    "How long a full subscriber queue holds the event stream (publishers wait) before that subscriber alone loses events (a gap for it; bus.stats drops counts them as a lower bound, see docs/PROTOCOL.md); 0 never holds.",
                default: "100"),
            OptionSpec(
                "catch-up-ms", value: "MS",
                help:
                    "After a drop, how long the kernel re-sends the newest event of each stream (flagged repeated) so a subscriber that lost a stream's end sees the gap; 0 never.",
                default: "30000"),
            OptionSpec("policy", value: "FILE", help: "Permission policy (JSON); default KEYS/policy.json or the built-in one."),
        ]
    static let discussion: String? = """
        The kernel binds the request plane (ROUTER, 7/MDP) at --kernel and the event plane at
        PORT+1 (XSUB, publishers connect) and PORT+2 (XPUB, subscribers connect).
        With --keys DIR every endpoint requires CURVE: DIR holds kernel.key_secret and
        authorized/<identity>.key for every identity admitted. The kernel refuses to start when
        its ZAP handler fails its self-test, a secret file is readable by group or others, or
        libzmq lacks CURVE (exit 78).
        """

    var config: KernelConfig
    var level: Logger.Level
    var keys: String?
    var policy: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        config = KernelConfig(endpoints: try arguments.endpoints())
        level = try arguments.logLevel()
        if let ms = try arguments.int("heartbeat-ms") {
            let range = BusOptions.heartbeatRangeMs
            guard range.contains(ms) else {
                throw UsageError("the heartbeat (--heartbeat-ms or BUS_HEARTBEAT_MS) must be \(range.lowerBound) to \(range.upperBound) ms")
            }
            config.broker.heartbeatInterval = .milliseconds(ms)
            config.tuning.heartbeatIntervalMs = Int32(clamping: ms)
            config.tuning.heartbeatTimeoutMs = Int32(clamping: ms * 3)
            config.tuning.heartbeatTTLMs = Int32(clamping: ms * 3)
        }
        if let ms = try arguments.int("grace-ms") { config.broker.defaultGrace = .milliseconds(ms) }
        if let bytes = try arguments.int("max-message-bytes") {
            guard bytes >= 1024 else { throw UsageError("--max-message-bytes must be at least 1024") }
            config.tuning.maxMessageSize = Int64(bytes)
        }
        if let n = try arguments.int("max-retained") { config.maxRetainedTopics = n }
        if let n = try arguments.int("max-subscriptions") {
            guard n >= 1 else { throw UsageError("--max-subscriptions must be at least 1") }
            config.maxSubscriptions = n
        }
        if let n = try arguments.int("max-subscriptions-per-owner") {
            guard n >= 1 else { throw UsageError("--max-subscriptions-per-owner must be at least 1") }
            config.maxSubscriptionsPerOwner = n
        }
        if let n = try arguments.int("subscriber-hwm") { config.subscriberHighWater = Int32(clamping: max(1, n)) }
        if let ms = try arguments.int("subscriber-grace-ms") {
            guard (0...60_000).contains(ms) else { throw UsageError("--subscriber-grace-ms must be 0 to 60000") }
            config.subscriberGrace = .milliseconds(ms)
        }
        if let ms = try arguments.int("catch-up-ms") {
            guard (0...3_600_000).contains(ms) else { throw UsageError("--catch-up-ms must be 0 to 3600000") }
            config.catchUpWindow = .milliseconds(ms)
        }
        keys = arguments.value("keys")
        policy = arguments.value("policy")
        if policy != nil && keys == nil { throw UsageError("--policy needs --keys (permissions come from CURVE identities)") }
    }

    func run() async throws -> Int32 {
        var config = self.config
        if let keys {
            do {
                config.security = try KernelSecurity.load(keys: URL(fileURLWithPath: keys), policyFile: policy.map { URL(fileURLWithPath: $0) })
            } catch {
                throw CommandFailure("security: \(error)", code: ExitCode.configError)
            }
        }
        let kernel = Kernel(config: config, logger: Logger(label: "kernel", level: level))
        let signals = SignalWatcher([SIGTERM, SIGINT])
        let (stopped, stoppedContinuation) = AsyncStream<Void>.makeStream()
        do {
            try await kernel.start(onExit: { stoppedContinuation.finish() })
        } catch let error as SecurityError {
            throw CommandFailure("cannot start the kernel: \(error)", code: ExitCode.configError)
        } catch {
            throw CommandFailure("cannot start the kernel: \(error)")
        }
        let signal = await signals.next()
        Logger(label: "kernel", level: level).info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"); stopping")
        kernel.stop()
        for await _ in stopped {}
        return ExitCode.ok
    }
}
