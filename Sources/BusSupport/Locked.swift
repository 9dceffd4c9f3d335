import Glibc

/// A value guarded by a `pthread_mutex_t`.
///
/// Used instead of `Synchronization.Mutex`, whose Linux implementation (futex calls from the
/// uninstrumented standard library) ThreadSanitizer cannot see, so every access under it is
/// reported as a race; `pthread_mutex_lock` is intercepted by TSan, which keeps the
/// `--sanitize=thread` run of the test suite meaningful.
///
/// `@unchecked Sendable`: every access to the value happens with the mutex held.
public final class Locked<Value>: @unchecked Sendable {
    // Usable from inlinable code: `withLock` is inlined, so that callers in other modules get
    // it specialized for their value and closure rather than the generic entry point.
    @usableFromInline var storage: Value
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.storage = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// A copy of the value, read with the lock held.
    public var value: Value { withLock { $0 } }

    /// Runs `body` with the lock held.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage)
    }
}
