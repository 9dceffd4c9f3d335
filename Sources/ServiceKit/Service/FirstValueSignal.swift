import Bus

/// Signals once, when an observation delivered its first value; waiters wait with a deadline.
/// A service waits on it before it registers its methods, so its first requests see the
/// observed state (the signed-in user) instead of racing it.
final class FirstValueSignal: Sendable {
    private let state = Locked((done: false, waiters: [CheckedContinuation<Void, Never>]()))

    /// Marks the first value as delivered and wakes the waiters (later calls do nothing).
    func signal() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard !s.done else { return [] }
            s.done = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until ``signal()`` or `timeout`; true when it was signalled.
    func wait(timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = self.state.withLock { s -> Bool in
                        if s.done { return true }
                        s.waiters.append(continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            // Release a waiter still parked, so the group can end.
            self.signalIfTimedOut(first)
            group.cancelAll()
            return first
        }
    }

    private func signalIfTimedOut(_ signalled: Bool) {
        guard !signalled else { return }
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
