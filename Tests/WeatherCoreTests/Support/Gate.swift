import Bus

/// Holds upstream calls of a test client until the test opens the gate, so a test sees the
/// state while they are in flight; counts the calls that came.
final class Gate: Sendable {
    private let state = Locked<(open: Bool, calls: Int, waiters: [CheckedContinuation<Void, Never>])>((false, 0, []))

    /// How many calls passed `enter` so far.
    var calls: Int { state.withLock { $0.calls } }

    /// Counts the call and waits until the gate is open.
    func enter() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { s -> Bool in
                s.calls += 1
                if s.open { return true }
                s.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    /// Lets every waiting and later call through.
    func open() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.open = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
