/// What the kernel and its clients must agree on beyond the frames, kept below both layers.
package enum KernelContract {
    /// The service name under which the kernel answers requests itself (`bus.services`,
    /// `bus.retained`, ...).
    package static let serviceName = "bus"
    /// After a grace ran out, how long full buffers (in a client) and full subscriber queues (in
    /// the kernel) drop at once instead of holding.
    package static let subscriberLossyWindow: Duration = .seconds(10)
}
