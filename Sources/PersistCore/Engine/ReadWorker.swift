import Bus
import Foundation

/// The read side: one dedicated thread with its own read-only connection (WAL lets it read
/// the last committed state while the writer commits). Queries queue in order, at most
/// `capacity` of them; past that a query is refused at once (``PersistError/overloaded(_:)``).
final class ReadWorker: @unchecked Sendable {
    // @unchecked: `jobs`, `stopping` and `stopped` are guarded by `condition`; the connection
    // is confined to the worker's thread.
    typealias Job = (PersistStore) -> Void

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var stopping = false
    private var stopped = false
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    let capacity: Int

    private init(capacity: Int) {
        self.capacity = capacity
    }

    /// Starts the thread and opens the read connection on it.
    static func start(path: String, capacity: Int = 256) async throws(PersistError) -> ReadWorker {
        let worker = ReadWorker(capacity: capacity)
        let opened: Result<Void, PersistError> = await withCheckedContinuation { continuation in
            Thread.startNamed("persist.reader") {
                let store: PersistStore
                do throws(SQLiteError) {
                    store = try PersistStore.openReader(path: path)
                } catch {
                    continuation.resume(returning: .failure(.sqlite(error)))
                    return
                }
                continuation.resume(returning: .success(()))
                worker.run(store: store)
            }
        }
        try opened.get()
        return worker
    }

    /// Runs `body` on the reader thread.
    func perform<T: Sendable>(_ body: @escaping @Sendable (PersistStore) throws -> T) async throws -> T {
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            condition.lock()
            guard !stopping else {
                condition.unlock()
                continuation.resume(returning: .failure(PersistError.closed))
                return
            }
            guard jobs.count < capacity else {
                condition.unlock()
                continuation.resume(returning: .failure(PersistError.overloaded("\(capacity) queries are already queued; try again")))
                return
            }
            jobs.append { store in
                do {
                    continuation.resume(returning: .success(try body(store)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            condition.signal()
            condition.unlock()
        }
        return try result.get()
    }

    /// Answers the queued queries, closes the connection and stops the thread.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            if stopped {
                condition.unlock()
                continuation.resume()
                return
            }
            stopping = true
            stopWaiters.append(continuation)
            condition.signal()
            condition.unlock()
        }
    }

    private func run(store: PersistStore) {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            let batch = jobs
            jobs.removeAll()
            let stop = stopping
            condition.unlock()
            for job in batch { job(store) }
            if stop && batch.isEmpty { break }
        }
        store.close()
        condition.lock()
        stopped = true
        let waiters = stopWaiters
        stopWaiters.removeAll()
        condition.unlock()
        for waiter in waiters { waiter.resume() }
    }
}
