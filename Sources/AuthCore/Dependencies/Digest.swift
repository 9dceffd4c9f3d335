import Foundation
import ServiceKit

/// SHA-256 for PKCE challenges and stored token digests.
public enum Digest {
    public static func sha256(_ text: String) -> [UInt8] { Sodium.sha256(Array(text.utf8)) }
    public static func sha256Hex(_ text: String) -> String { sha256(text).map { String(format: "%02x", $0) }.joined() }
    /// The PKCE S256 challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))).
    public static func pkceChallenge(_ verifier: Secret) -> String { Base64URL.encode(sha256(verifier.revealed)) }
}
