import Bus
import Foundation

/// Where new ids come from, as a dependency: random UUIDs, or a counter in tests.
public struct IDGenerator: Sendable {
    public var next: @Sendable () -> String

    public init(next: @escaping @Sendable () -> String) { self.next = next }

    /// Lowercased random UUIDs.
    public static let live = IDGenerator { UUID().uuidString.lowercased() }

    /// `prefix-1`, `prefix-2`, ...: predictable in tests.
    public static func test(prefix: String = "id") -> IDGenerator {
        let counter = Locked(0)
        return IDGenerator {
            let n = counter.withLock { value -> Int in
                value += 1
                return value
            }
            return "\(prefix)-\(n)"
        }
    }
}
