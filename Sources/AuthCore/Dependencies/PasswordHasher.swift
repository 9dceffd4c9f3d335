import Foundation

/// Hashes and checks passwords: Argon2id through libsodium, or a fast stand-in for tests.
public struct PasswordHasher: Sendable {
    public var hash: @Sendable (Secret) async throws -> String
    public var verify: @Sendable (_ hash: String, _ password: Secret) async -> Bool

    public init(hash: @escaping @Sendable (Secret) async throws -> String, verify: @escaping @Sendable (String, Secret) async -> Bool) {
        self.hash = hash
        self.verify = verify
    }

    /// `crypto_pwhash_str` / `crypto_pwhash_str_verify` (Argon2id, interactive limits), run on
    /// a Dispatch queue: each takes tens of milliseconds of CPU and 64 MiB, which must not hold
    /// one of the cooperative pool's few threads.
    public static let live = PasswordHasher(
        hash: { password in
            try await offPool { () throws(PasswordHashError) -> String in try Sodium.passwordHash(password.revealed) }
        },
        verify: { hash, password in
            (try? await offPool { () throws(PasswordHashError) -> Bool in Sodium.passwordVerify(hash, password.revealed) }) ?? false
        })

    /// Not a hash at all (`test:` + the password): for reducer and runtime tests only.
    public static let test = PasswordHasher(
        hash: { "test:" + $0.revealed },
        verify: { hash, password in hash == "test:" + password.revealed })

    private static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws(PasswordHashError) -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    continuation.resume(returning: try work())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
