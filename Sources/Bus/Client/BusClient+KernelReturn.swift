extension BusClient {
    /// Calls `handler` each time the kernel subscribes to this client's events again after its
    /// connection went away: a kernel that was restarted (or the events-in endpoint re-bound).
    ///
    /// A restarted kernel holds no retained value of its own; `persist` refills it with the
    /// values it committed, which can be older than an owner's state (a change published just
    /// before the kernel died, while `persist` was busy or paused, never reached it). An owner
    /// of retained state publishes its current values again here (the service kit does), so the
    /// kernel and `persist` hold them and a later restart of the owner restores them.
    ///
    /// `handler` runs on the client's I/O thread: it must only hand the work on (start a task).
    /// It is not called for the first subscription, and never after ``close()``.
    public func onKernelReturn(_ handler: @escaping @Sendable () -> Void) {
        io.kernelReturnHandlers.withLock { $0.append(handler) }
    }
}
