import CSodium
import Foundation

/// libsodium, wrapped in one place: initialisation, random bytes, SHA-256, Argon2id.
enum Sodium {
    /// `sodium_init` once per process (it is safe to call again; this makes it cheap).
    private static let initialized: Bool = sodium_init() >= 0

    static func ensureInitialized() {
        precondition(initialized, "libsodium could not be initialised")
    }

    /// Bytes from the kernel's CSPRNG (`randombytes_buf`).
    static func randomBytes(_ count: Int) -> [UInt8] {
        ensureInitialized()
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return bytes
    }

    static func sha256(_ data: [UInt8]) -> [UInt8] {
        ensureInitialized()
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = crypto_hash_sha256(&digest, data, UInt64(data.count))
        return digest
    }

    /// An Argon2id hash string (`$argon2id$v=19$m=...`) with libsodium's interactive limits.
    /// CPU- and memory-heavy (tens of milliseconds, 64 MiB): call it off the cooperative pool.
    static func passwordHash(_ password: String) throws(PasswordHashError) -> String {
        ensureInitialized()
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        // utf8CString ends with a NUL, so its buffer always has a base address; the NUL is not
        // part of the password.
        let rc = password.utf8CString.withUnsafeBufferPointer { buffer in
            crypto_pwhash_str_alg(
                &output, buffer.baseAddress!, UInt64(buffer.count - 1), UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE),
                Int(crypto_pwhash_MEMLIMIT_INTERACTIVE), crypto_pwhash_ALG_ARGON2ID13)
        }
        guard rc == 0 else { throw .outOfMemory }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Checks `password` against an Argon2 hash string (constant time in the password).
    static func passwordVerify(_ hash: String, _ password: String) -> Bool {
        ensureInitialized()
        return hash.withCString { hashPointer in
            password.utf8CString.withUnsafeBufferPointer {
                crypto_pwhash_str_verify(hashPointer, $0.baseAddress!, UInt64($0.count - 1)) == 0
            }
        }
    }
}

/// `crypto_pwhash_str` failed: libsodium says that happens only when the memory limit cannot
/// be allocated.
public enum PasswordHashError: Error, Sendable, CustomStringConvertible {
    case outOfMemory
    public var description: String { "Argon2id hashing failed: not enough memory for the interactive limit (64 MiB)" }
}
