import BusSupport

/// Work a service process runs at shutdown, after its services drained (see
/// ``ServiceContext/onShutdown(_:)``).
final class ShutdownHooks: Sendable {
    private let actions = Locked<[@Sendable () async -> Void]>([])

    func add(_ action: @escaping @Sendable () async -> Void) {
        actions.withLock { $0.append(action) }
    }

    /// Runs every registered action once, last registered first.
    func run() async {
        let pending = actions.withLock { list -> [@Sendable () async -> Void] in
            defer { list.removeAll() }
            return list
        }
        for action in pending.reversed() { await action() }
    }
}
