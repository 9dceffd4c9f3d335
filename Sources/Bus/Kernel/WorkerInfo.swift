import Foundation

/// What a worker says about itself in the optional metadata frame after its READY service name
/// (a JSON object; unmodified MDP workers send none and are named by their routing id).
public struct WorkerInfo: Codable, Equatable, Sendable {
    public var instance: String
    public var version: String?
    public var host: String?
    public var pid: Int?

    public init(instance: String, version: String? = nil, host: String? = nil, pid: Int? = nil) {
        self.instance = instance
        self.version = version
        self.host = host
        self.pid = pid
    }

    init(identity: [UInt8], metadata: [UInt8]?) {
        if let metadata, !metadata.isEmpty,
            let decoded = try? JSONDecoder().decode(WorkerInfo.self, from: Data(metadata)),
            !decoded.instance.isEmpty
        {
            self = decoded
        } else {
            self.init(instance: Self.hex(identity))
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
