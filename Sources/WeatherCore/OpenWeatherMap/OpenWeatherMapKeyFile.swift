import Foundation

/// Reads an OpenWeatherMap API key from a file only its owner may read (mode 0600 or 0400): a
/// key others can read is refused, as ssh refuses a private key with loose permissions.
public enum OpenWeatherMapKeyFile {
    /// Why a key file cannot be used.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "the OpenWeatherMap key file \(path) \(reason)" }
    }

    /// The key in the file at `path` (its first line, trimmed).
    /// - Throws: ``Problem`` when the file cannot be read, is readable by the group or others,
    ///   or holds no key.
    public static func read(_ path: String) throws(Problem) -> OpenWeatherMapAPIKey {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw Problem(path: path, reason: "cannot be read: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Problem(path: path, reason: "is not a regular file") }
        let loose = info.st_mode & 0o077
        guard loose == 0 else {
            throw Problem(
                path: path,
                reason: "may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); make it private: chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw Problem(path: path, reason: "cannot be read") }
        let key = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard let key, !key.isEmpty else { throw Problem(path: path, reason: "holds no key") }
        return OpenWeatherMapAPIKey(key)
    }
}
