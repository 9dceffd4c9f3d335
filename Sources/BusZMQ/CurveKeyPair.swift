import CZeroMQ
import Foundation

/// A CURVE key pair (RFC 26), stored in the certificate format of czmq's `zcert` and pyzmq's
/// `zmq.auth` (ZPL text): `NAME.key` holds the public key, `NAME.key_secret` both keys.
public struct CurveKeyPair: Equatable, Sendable {
    /// 32-byte public key.
    public let publicKey: [UInt8]
    /// 32-byte secret key; nil for a public certificate.
    public let secretKey: [UInt8]?

    public init(publicKey: [UInt8], secretKey: [UInt8]?) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A new random key pair from libzmq (`zmq_curve_keypair`).
    /// - Throws: ``SecurityError/curveUnavailable`` when libzmq was built without CURVE.
    public static func generate() throws(SecurityError) -> CurveKeyPair {
        guard ZMQContext.has("curve") else { throw .curveUnavailable }
        var pub = [CChar](repeating: 0, count: 41)
        var sec = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&pub, &sec) == 0 else { throw .curveUnavailable }
        let publicText = cString(pub)
        let secretText = cString(sec)
        return CurveKeyPair(publicKey: Z85.decode(publicText)!, secretKey: Z85.decode(secretText)!)
    }

    /// The public key as 40 Z85 characters.
    public var publicZ85: String { Z85.encode(publicKey) }
    public var secretZ85: String? { secretKey.map(Z85.encode) }

    // MARK: certificate files

    /// Writes `NAME.key` (0644) and `NAME.key_secret` (0600) into `directory`.
    public func write(name: String, to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let date = ISO8601DateFormatter().string(from: Date())
        let publicText = """
            #   ****  Generated on \(date) by swiftbus  ****
            #   ZeroMQ CURVE Public Certificate
            #   Exchange securely, or use a secure mechanism to verify the contents
            #   of this file after exchange. Store public certificates in your home
            #   directory, in the .curve subdirectory.

            metadata
                name = "\(name)"
            curve
                public-key = "\(publicZ85)"

            """
        try Self.writeAtomically(publicText, to: directory.appendingPathComponent("\(name).key"), mode: 0o644)
        guard let secretZ85 else { return }
        let secretText = """
            #   ****  Generated on \(date) by swiftbus  ****
            #   ZeroMQ CURVE **Secret** Certificate
            #   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.

            metadata
                name = "\(name)"
            curve
                public-key = "\(publicZ85)"
                secret-key = "\(secretZ85)"

            """
        try Self.writeAtomically(secretText, to: directory.appendingPathComponent("\(name).key_secret"), mode: 0o600)
    }

    private static func writeAtomically(_ text: String, to url: URL, mode: Int) throws {
        let temp = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())")
        guard FileManager.default.createFile(atPath: temp.path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]) else {
            throw SecurityError.unreadable(url.path, reason: "cannot write")
        }
        chmod(temp.path, mode_t(mode))
        guard rename(temp.path, url.path) == 0 else {
            let code = errno
            unlink(temp.path)
            throw SecurityError.unreadable(url.path, reason: "cannot write: \(String(cString: strerror(code)))")
        }
    }

    /// Reads a certificate file (public or secret). A secret file must not be readable by group
    /// or others.
    /// - Throws: ``SecurityError``: unreadable file, bad format, loose permissions.
    public static func load(_ url: URL) throws(SecurityError) -> CurveKeyPair {
        guard let data = FileManager.default.contents(atPath: url.path), let text = String(data: data, encoding: .utf8) else {
            throw .unreadable(url.path, reason: "missing or not UTF-8")
        }
        var publicKey: [UInt8]?
        var secretKey: [UInt8]?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard !line.hasPrefix("#"), let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            switch key {
            case "public-key":
                guard let decoded = Z85.decode(value), decoded.count == 32 else {
                    throw .badFormat(url.path, reason: "public-key is not 40 Z85 characters")
                }
                publicKey = decoded
            case "secret-key":
                guard let decoded = Z85.decode(value), decoded.count == 32 else {
                    throw .badFormat(url.path, reason: "secret-key is not 40 Z85 characters")
                }
                secretKey = decoded
            default:
                continue
            }
        }
        guard let publicKey else { throw .badFormat(url.path, reason: "no public-key") }
        if secretKey != nil { try checkPrivate(url) }
        return CurveKeyPair(publicKey: publicKey, secretKey: secretKey)
    }

    /// Throws when a secret file can be read by group or others.
    public static func checkPrivate(_ url: URL) throws(SecurityError) {
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw .unreadable(url.path, reason: "cannot stat") }
        if info.st_mode & 0o077 != 0 {
            throw .insecurePermissions(url.path, mode: String(info.st_mode & 0o777, radix: 8))
        }
    }
}

/// Z85 (ZeroMQ RFC 32) through libzmq.
public enum Z85 {
    public static func encode(_ bytes: [UInt8]) -> String {
        precondition(bytes.count % 4 == 0, "Z85 encodes multiples of 4 bytes")
        var out = [CChar](repeating: 0, count: bytes.count * 5 / 4 + 1)
        bytes.withUnsafeBufferPointer { _ = zmq_z85_encode(&out, $0.baseAddress, $0.count) }
        return cString(out)
    }

    public static func decode(_ text: String) -> [UInt8]? {
        guard text.count % 5 == 0, !text.isEmpty else { return nil }
        var out = [UInt8](repeating: 0, count: text.count * 4 / 5)
        guard zmq_z85_decode(&out, text) != nil else { return nil }
        return out
    }
}

/// Security set-up errors: each names the file and what to do.
public enum SecurityError: Error, Equatable, Sendable, CustomStringConvertible {
    case curveUnavailable
    case unreadable(String, reason: String)
    case badFormat(String, reason: String)
    case insecurePermissions(String, mode: String)
    case missing(String)
    case zapHandlerNotRunning(String)
    case badPolicy(String)

    public var description: String {
        switch self {
        case .curveUnavailable: return "this libzmq was built without CURVE (zmq_has(\"curve\") is 0): security cannot be turned on"
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .badFormat(let path, let reason): return "\(path) is not a CURVE certificate: \(reason)"
        case .insecurePermissions(let path, let mode):
            return "secret key file \(path) has mode \(mode): it must not be readable by group or others (chmod 600 \(path))"
        case .missing(let what): return "missing \(what)"
        case .zapHandlerNotRunning(let why): return "the ZAP handler is not running (\(why)); refusing to start with security on"
        case .badPolicy(let why): return "bad policy: \(why)"
        }
    }
}

/// A NUL-terminated C buffer as a String.
package func cString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
