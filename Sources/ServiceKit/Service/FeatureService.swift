import Bus
import Foundation

/// The `main` of a service on the kit: ``ServiceMain`` (options, connection, signals, drain)
/// around a ``Store``: restore every state topic, start, observe (waiting up to
/// ``ServiceDefinition/observeDeadline`` for each observed topic's current value), then
/// register the methods.
public enum FeatureService {
    /// Runs the service `setup` defines until SIGTERM or SIGINT; never returns.
    ///
    /// Exit codes: 0 after a signal, 64 when `setup` throws a ``UsageError``, 78 for a
    /// ``ConfigurationError``, 1 when anything else stops the start (a saved state that cannot
    /// be read back included: the service does not start over it).
    /// - Parameters:
    ///   - name: the service name.
    ///   - overview: one line for `--help`.
    ///   - options: the service's own options.
    ///   - setup: reads the options and builds the definition.
    public static func run<F: Feature>(
        name: String, overview: String, options: [OptionSpec] = [], arguments: [String] = Array(CommandLine.arguments.dropFirst()),
        setup: @escaping @Sendable (ServiceContext) async throws -> ServiceDefinition<F>
    ) async -> Never {
        await ServiceMain.run(name: name, overview: overview, options: options, arguments: arguments) { context in
            let definition = try await setup(context)
            let logger = context.logger
            let store = definition.makeStore(ports: .bus(context.bus, restoreDeadline: definition.restoreDeadline), logger: logger)
            context.onShutdown { await store.shutdown() }
            context.onDrainDeadline { await store.answerWaiting() }
            try await store.restore()
            await store.start(with: definition.startAction)
            // A restarted kernel may hold older values than the store (docs/RELIABILITY.md).
            context.bus.onKernelReturn { Task { await store.republishAll() } }
            let signals = definition.observations.map { _ in FirstValueSignal() }
            let observations = try definition.startObservations(bus: context.bus, store: store, signals: signals)
            // Hooks run in reverse: the observations stop before the store does.
            context.onShutdown { for task in observations { task.cancel() } }
            // The first requests see the observed state (the signed-in user), not a race with it.
            for signal in signals where await !signal.wait(timeout: definition.observeDeadline) {
                logger.warning("an observed topic has no current value yet; serving without it")
            }
            return [definition.busService(store: store, concurrency: try context.arguments.int("concurrency"))]
        }
    }
}
