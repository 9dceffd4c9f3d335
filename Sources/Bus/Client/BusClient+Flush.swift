import BusSupport
import BusZMQ

extension BusClient {
    /// Waits until every event published so far has been handed to a connection on which the
    /// kernel has subscribed, i.e. it will reach the kernel unless the connection breaks.
    ///
    /// Publishing never waits; a process that publishes and exits at once (`busctl pub`) calls
    /// this to know its events left, and to report a kernel it cannot reach.
    /// - Parameter timeout: how long to wait for the kernel's events-in endpoint.
    /// - Returns: false when the events are still held at the deadline (the kernel's events-in
    ///   endpoint is not reachable) or the client is closed.
    public func flushPublishes(timeout: Duration) async -> Bool {
        let io = self.io
        let deadline = MonotonicTime.now + timeout
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = Once(continuation)
            let accepted = io.submit { loop in
                do throws(ZMQError) {
                    try loop.publisherHandler().whenFlushed(deadline: deadline, done: once.resume)
                } catch {
                    once.resume(false)
                }
            }
            if !accepted { once.resume(false) }
        }
    }
}
