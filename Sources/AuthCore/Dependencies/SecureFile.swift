import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Files only the service's user may read: checked before reading, written atomically with
/// mode 0600 (a temporary file in the same folder, fsync, rename, fsync of the folder).
public enum SecureFile {
    /// Reads `url`, or nil when it does not exist.
    /// - Throws: ``SecureFileError/tooOpen(path:mode:)`` when group or others may read or write
    ///   it, ``SecureFileError/wrongOwner(path:uid:)`` when another user owns it.
    public static func read(_ url: URL) throws(SecureFileError) -> Data? {
        guard try checkPrivate(url) else { return nil }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw .io(path: url.path, call: "read", errno: (error as NSError).code)
        }
    }

    /// Checks the mode and owner of `url`; false when it does not exist.
    @discardableResult
    public static func checkPrivate(_ url: URL) throws(SecureFileError) -> Bool {
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return false }
            throw .io(path: url.path, call: "stat", errno: Int(code))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notAFile(path: url.path) }
        guard info.st_uid == geteuid() else { throw .wrongOwner(path: url.path, uid: info.st_uid) }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else { throw .tooOpen(path: url.path, mode: mode) }
        return true
    }

    /// Replaces `url` with `data` atomically, mode 0600.
    public static func write(_ data: Data, to url: URL) throws(SecureFileError) {
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: temporary.path, call: "open", errno: Int(errno)) }
        var failure: SecureFileError?
        if fchmod(fd, 0o600) != 0 { failure = .io(path: temporary.path, call: "fchmod", errno: Int(errno)) }
        if failure == nil {
            let written = data.withUnsafeBytes { buffer -> Int in
                var offset = 0
                while offset < buffer.count {
                    let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        return -1
                    }
                    offset += n
                }
                return offset
            }
            if written != data.count { failure = .io(path: temporary.path, call: "write", errno: Int(errno)) }
        }
        if failure == nil, fsync(fd) != 0 { failure = .io(path: temporary.path, call: "fsync", errno: Int(errno)) }
        close(fd)
        if failure == nil, rename(temporary.path, url.path) != 0 { failure = .io(path: url.path, call: "rename", errno: Int(errno)) }
        if let failure {
            unlink(temporary.path)
            throw failure
        }
        syncFolder(folder)
    }

    /// Removes `url` if it exists.
    public static func remove(_ url: URL) throws(SecureFileError) {
        if unlink(url.path) != 0, errno != ENOENT { throw .io(path: url.path, call: "unlink", errno: Int(errno)) }
        syncFolder(url.deletingLastPathComponent())
    }

    private static func syncFolder(_ folder: URL) {
        let fd = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }
}

/// Why a private file could not be used.
public enum SecureFileError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooOpen(path: String, mode: mode_t)
    case wrongOwner(path: String, uid: uid_t)
    case notAFile(path: String)
    case io(path: String, call: String, errno: Int)
    case malformed(path: String, reason: String)

    public var description: String {
        switch self {
        case .tooOpen(let path, let mode):
            return "\(path) has mode \(String(mode, radix: 8)): group or others may read it; refusing to use it (chmod 600 \(path))"
        case .wrongOwner(let path, let uid):
            return "\(path) belongs to uid \(uid), not to this service's user (uid \(geteuid())); refusing to use it"
        case .notAFile(let path):
            return "\(path) is not a regular file; refusing to use it"
        case .io(let path, let call, let code):
            return "\(call) \(path) failed: \(String(cString: strerror(Int32(code))))"
        case .malformed(let path, let reason):
            return "\(path) is not a valid file of its kind: \(reason)"
        }
    }
}
