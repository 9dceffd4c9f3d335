import Foundation

/// Reads a child process's output pipe on a thread of its own until end of file.
///
/// Not with `FileHandle.readabilityHandler`: those are libdispatch sources, and in parallel test
/// runs libdispatch's manager thread crashed the test process in `_dispatch_event_loop_drain`
/// (a bad pointer at 0x30) about once in five runs. The thread owns a close-on-exec copy of the
/// descriptor (the handle is closed), so no dispatch source and no other test's child holds it.
public enum OutputReader {
    public static func start(
        _ handle: FileHandle, onData: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void
    ) {
        let fd = fcntl(handle.fileDescriptor, F_DUPFD_CLOEXEC, 0)
        try? handle.close()
        guard fd >= 0 else {
            onEnd()
            return
        }
        let reader = Thread {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    onData(Data(chunk[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(fd)
            onEnd()
        }
        reader.name = "test-output-reader"
        reader.start()
    }
}
