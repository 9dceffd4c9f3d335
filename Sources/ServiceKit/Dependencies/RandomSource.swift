import Bus
import Foundation

/// Where random bytes come from, as a dependency: the system's CSPRNG, or a predictable
/// sequence in tests.
public struct RandomSource: Sendable {
    public var bytes: @Sendable (Int) -> [UInt8]

    public init(bytes: @escaping @Sendable (Int) -> [UInt8]) { self.bytes = bytes }

    /// The system's cryptographically secure generator (`getrandom` on Linux).
    public static let live = RandomSource { count in
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// Bytes 0, 1, 2, ... continuing across calls: every token differs and every run is the same.
    public static func test() -> RandomSource {
        let counter = Locked<UInt8>(0)
        return RandomSource { count in
            counter.withLock { next in
                (0..<count).map { _ in
                    defer { next &+= 1 }
                    return next
                }
            }
        }
    }

    /// 256 random bits as unpadded base64url (43 characters): tokens, `state`, PKCE verifiers
    /// (which RFC 7636 wants 43 to 128 characters of `[A-Za-z0-9-._~]`).
    public func token() -> String { Base64URL.encode(bytes(32)) }
}

/// Unpadded base64url (RFC 4648 section 5).
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
