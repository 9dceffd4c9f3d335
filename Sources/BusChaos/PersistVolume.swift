import BusTestSupport
import Foundation

/// `persist`'s data directory on a filesystem of its own: a size-limited tmpfs mounted over
/// `state/persist` in the run's private mount namespace (``Sandbox``), so the `disk-full` fault
/// can fill it without touching any other filesystem. The mount exists only in that namespace:
/// it goes away with the run's last process, also when the run is killed.
struct PersistVolume: Sendable {
    let path: URL
    let megabytes: Int
    /// The file that fills the filesystem while a `disk-full` fault lasts.
    var ballast: URL { path.appendingPathComponent("ballast") }

    /// Mounts the tmpfs at `path` (an empty directory). Throws with `mount`'s message.
    static func mount(at path: URL, megabytes: Int) async throws -> PersistVolume {
        try await Command.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "bus-chaos-persist", path.path])
        return PersistVolume(path: path, megabytes: megabytes)
    }

    /// Fills the filesystem: a ballast file as large as the free space (`fallocate`, then
    /// writes until `ENOSPC`, so no page is left). Returns the ballast's size in bytes.
    func fill() throws -> Int {
        let fd = open(ballast.path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ChaosFailure("cannot create \(ballast.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var size = 0
        if let free = freeBytes(), free > 0, posix_fallocate(fd, 0, off_t(free)) == 0 { size = free }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(size)) }
            if written > 0 {
                size += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        return size
    }

    /// Removes the ballast: the space is free again at once.
    func drain() { unlink(ballast.path) }

    /// Free bytes for an unprivileged writer, nil when `statvfs` fails.
    func freeBytes() -> Int? {
        var info = statvfs()
        guard statvfs(path.path, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Copies what persist left (the database, its WAL) to `destination`, for a look after the
    /// run, since the tmpfs goes away with it; then unmounts (lazily: a process may still hold
    /// a file).
    func saveAndUnmount(to destination: URL) async {
        drain()
        try? FileManager.default.removeItem(at: destination)
        try? FileManager.default.copyItem(at: path, to: destination)
        _ = try? await Command.run("/bin/umount", ["-l", path.path])
    }
}
