import Bus
import Foundation

/// The writes host 3's client made, in order.
final class WriteLog: Sendable {
    private let entries = Locked<[MultiHostTests.Write]>([])
    private let cities: [Int]
    private let likes: [String]

    init(cities: [Int], likes: [String]) {
        self.cities = cities
        self.likes = likes
    }

    var writes: [MultiHostTests.Write] { entries.withLock { $0 } }

    /// Makes the next write (follows and likes in turn, each of a new city or event) with a
    /// short timeout, and records whether it was acknowledged.
    func write(_ c: MultiHostCluster, since cut: ContinuousClock.Instant) async {
        let n = entries.withLock { $0.count }
        let kind: MultiHostTests.Write.Kind = n % 2 == 0 ? .follow(cities[(n / 2) % cities.count]) : .like(likes[(n / 2) % likes.count])
        let started = ContinuousClock.now - cut
        let run: MultiHostCluster.Run?
        switch kind {
        case .follow(let id):
            run = try? await c.busctl(["call", "weather", "follow", #"{"id":\#(id)}"#, "--timeout", "2", "--connect-timeout", "2"])
        case .like(let id):
            run = try? await c.busctl(["call", "events", "like", #"{"id":"\#(id)"}"#, "--timeout", "2", "--connect-timeout", "2"])
        }
        entries.withLock { $0.append(MultiHostTests.Write(kind: kind, started: started, acknowledged: run?.ok == true)) }
    }

    /// Acknowledged and failed writes started before the link went down, while it was down
    /// (`outage`, relative to the planned cut), and after it came back.
    func summary(outage: Range<Duration>) -> String {
        let writes = self.writes
        func count(_ label: String, _ when: (Duration) -> Bool) -> String {
            let phase = writes.filter { when($0.started) }
            return "\(label) \(phase.filter(\.acknowledged).count)/\(phase.filter { !$0.acknowledged }.count)"
        }
        return [
            count("before the cut") { $0 < outage.lowerBound }, count("during the outage") { outage.contains($0) },
            count("after the link came back") { $0 >= outage.upperBound },
        ].joined(separator: ", ")
    }
}
