import BusZMQ
import Foundation

/// The kernel's security settings, read from a keys folder:
///
/// ```
/// KEYS/kernel.key, KEYS/kernel.key_secret     the kernel's key pair
/// KEYS/authorized/<identity>.key              one public key per identity it admits
/// KEYS/policy.json                            optional; the built-in policy otherwise
/// ```
public struct KernelSecurity: Sendable {
    public var keyPair: CurveKeyPair
    public var directory: URL
    public var policy: Policy

    public var authorizedDirectory: URL { directory.appendingPathComponent("authorized") }

    /// Loads and checks everything; fails closed on any problem.
    /// - Throws: ``SecurityError``: no CURVE in libzmq, missing or loose secret file, bad
    ///   certificate, bad policy.
    public static func load(keys: URL, policyFile: URL? = nil) throws(SecurityError) -> KernelSecurity {
        guard ZMQContext.has("curve") else { throw .curveUnavailable }
        let secret = keys.appendingPathComponent("kernel.key_secret")
        guard FileManager.default.fileExists(atPath: secret.path) else {
            throw .missing("\(secret.path) (create it with: busctl keygen kernel --dir \(keys.path))")
        }
        let pair = try CurveKeyPair.load(secret)
        guard pair.secretKey != nil else { throw .badFormat(secret.path, reason: "no secret-key") }
        var policy = Policy.builtIn
        let policyURL = policyFile ?? keys.appendingPathComponent("policy.json")
        if policyFile != nil || FileManager.default.fileExists(atPath: policyURL.path) {
            policy = try Policy.load(policyURL)
        }
        let security = KernelSecurity(keyPair: pair, directory: keys, policy: policy)
        _ = try security.loadAuthorized()
        return security
    }

    /// The admitted public keys (Z85) and their identities, from `authorized/*.key`.
    public func loadAuthorized() throws(SecurityError) -> [String: String] {
        let dir = authorizedDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else {
            throw .missing("\(dir.path) (one <identity>.key public certificate per service)")
        }
        var map: [String: String] = [:]
        for name in names.sorted() where name.hasSuffix(".key") {
            let identity = String(name.dropLast(4))
            let pair = try CurveKeyPair.load(dir.appendingPathComponent(name))
            map[pair.publicZ85] = identity
        }
        return map
    }

    /// A cheap fingerprint of the authorized folder (names, sizes, times) to notice changes.
    func authorizedSignature() -> String {
        let dir = authorizedDirectory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().map { name -> String in
            let attributes = try? FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(name).path)
            let size = (attributes?[.size] as? NSNumber)?.intValue ?? -1
            let time = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            return "\(name):\(size):\(time)"
        }.joined(separator: "|")
    }
}
