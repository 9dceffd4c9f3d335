import BusZMQ
import Foundation

/// A client's security settings: its own key pair and the kernel's public key.
///
/// From a keys folder: `KEYS/<identity>.key_secret` and `KEYS/kernel.key`.
public struct ClientSecurity: Sendable {
    public var keyPair: CurveKeyPair
    public var serverKey: [UInt8]
    public var identity: String

    public init(keyPair: CurveKeyPair, serverKey: [UInt8], identity: String) {
        self.keyPair = keyPair
        self.serverKey = serverKey
        self.identity = identity
    }

    /// - Throws: ``SecurityError`` when a file is missing, malformed or too open.
    public static func load(keys: URL, identity: String) throws(SecurityError) -> ClientSecurity {
        guard ZMQContext.has("curve") else { throw .curveUnavailable }
        let secret = keys.appendingPathComponent("\(identity).key_secret")
        guard FileManager.default.fileExists(atPath: secret.path) else {
            throw .missing(
                "\(secret.path) (create it with: busctl keygen \(identity) --dir \(keys.path), then copy \(identity).key into the kernel's authorized/ folder)"
            )
        }
        let pair = try CurveKeyPair.load(secret)
        guard pair.secretKey != nil else { throw .badFormat(secret.path, reason: "no secret-key") }
        let server = keys.appendingPathComponent("kernel.key")
        guard FileManager.default.fileExists(atPath: server.path) else { throw .missing("\(server.path) (the kernel's public key)") }
        return ClientSecurity(keyPair: pair, serverKey: try CurveKeyPair.load(server).publicKey, identity: identity)
    }
}
