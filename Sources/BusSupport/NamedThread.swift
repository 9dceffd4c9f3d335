import Foundation

extension Thread {
    /// Starts a thread whose name the OS sees too (`top -H`, `perf`, debuggers): Foundation on
    /// Linux applies `Thread.name` to the OS thread only when set from the thread itself, and
    /// Linux keeps at most 15 bytes of it.
    @discardableResult
    public static func startNamed(_ name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        let osName = String(decoding: Array(name.utf8.prefix(15)), as: UTF8.self)
        let thread = Thread {
            Thread.current.name = osName
            body()
        }
        thread.name = osName
        thread.start()
        return thread
    }
}
