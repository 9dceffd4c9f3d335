import Foundation

/// What a worker says about itself in the optional metadata frame after its READY service name
/// (a JSON object; unmodified MDP workers send none and are named by their routing id).
public struct WorkerInfo: Codable, Equatable, Sendable {
    public var instance: String
    public var version: String?
    public var host: String?
    public var pid: Int?
    /// Requests the worker accepts before its first reply (it answers them in order). Absent
    /// (an unmodified 7/MDP worker): 1, the protocol's one request at a time.
    public var credit: Int?
    /// The worker reads request bodies in the one-frame form and answers each request in its
    /// form (docs/PROTOCOL.md, "One-frame bodies"). Absent: it gets the three frames.
    public var oneFrame: Bool?
    /// The worker reads binary meta in one-frame request bodies and answers such a request with
    /// binary meta (docs/PROTOCOL.md, "Binary meta"). Absent: it gets the meta as JSON.
    public var binaryMeta: Bool?

    public init(
        instance: String, version: String? = nil, host: String? = nil, pid: Int? = nil, credit: Int? = nil, oneFrame: Bool? = nil,
        binaryMeta: Bool? = nil
    ) {
        self.instance = instance
        self.version = version
        self.host = host
        self.pid = pid
        self.credit = credit
        self.oneFrame = oneFrame
        self.binaryMeta = binaryMeta
    }

    enum CodingKeys: String, CodingKey {
        case instance, version, host, pid, credit
        case oneFrame = "one_frame"
        case binaryMeta = "binary_meta"
    }

    /// The credit, within 1...1000.
    package var effectiveCredit: Int { min(1000, max(1, credit ?? 1)) }

    package init(identity: [UInt8], metadata: [UInt8]?) {
        if let metadata, !metadata.isEmpty,
            let decoded = try? JSONDecoder().decode(WorkerInfo.self, from: Data(metadata)),
            !decoded.instance.isEmpty
        {
            self = decoded
        } else {
            self.init(instance: Self.hex(identity))
        }
    }

    package static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
