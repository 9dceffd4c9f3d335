import Glibc

/// Free loopback ports, for benchmarks and tests that start kernels side by side.
public enum FreePorts {
    /// Below Linux's default range of ephemeral ports (32768-60999): a port picked there can be
    /// taken by any outgoing connection's local end between the check and the kernel's bind.
    public static let defaultRange = 20_000...32_700

    /// A base port P with P, P+1 and P+2 all free on 127.0.0.1 right now (a kernel's three
    /// endpoints), or nil when none was found in 500 tries.
    public static func kernelBase(in range: ClosedRange<Int> = defaultRange) -> Int? {
        for _ in 0..<500 {
            let base = Int.random(in: range)
            if (0..<3).allSatisfy({ isFree(base + $0) }) { return base }
        }
        return nil
    }

    /// Whether a TCP port can be bound on 127.0.0.1 now.
    public static func isFree(_ port: Int) -> Bool {
        withLoopbackSocket(port) { fd, address, length in bind(fd, address, length) == 0 }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    public static func accepts(_ port: Int) -> Bool {
        withLoopbackSocket(port) { fd, address, length in connect(fd, address, length) == 0 }
    }

    /// Runs `body` with a fresh TCP socket and the address 127.0.0.1:`port`; false when no
    /// socket could be made.
    private static func withLoopbackSocket(
        _ port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool
    ) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
