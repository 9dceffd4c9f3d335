import Foundation

/// The verdict on one key (a register: a city followed or not, a like, an RSVP, the session).
struct KeyVerdict: Codable, Sendable {
    var key: String
    var initial: String
    var final: String
    /// The value of the last acknowledged write, nil when none was acknowledged.
    var lastAcknowledged: String?
    /// `ok`: the final value is the last acknowledged one, or a later write's whose outcome is
    /// unknown; `stale`: only an earlier write with an unknown outcome explains it (a request
    /// whose caller gave up was applied after a later acknowledged one: at-most-once, not
    /// ordered); `lost`: nothing explains it; `unexplained`: no write was acknowledged and the
    /// value is neither the initial one nor a write's.
    var verdict: String
}

/// Classifies every key of the history against the state read after the final crash.
enum Checker {
    /// `final` for each key; `initial` for keys that may not have been written.
    static func registers(history: [Operation], initial: [String: String], final: [String: String]) -> [KeyVerdict] {
        let writes = Dictionary(grouping: history.filter { $0.op != "feed.vote" }, by: \.key)
        return final.keys.sorted().map { key in
            let ops = (writes[key] ?? []).sorted { $0.index < $1.index }
            let start = initial[key] ?? "?"
            let value = final[key]!
            let lastOK = ops.lastIndex { $0.outcome == .ok }
            let base = lastOK.map { ops[$0].value } ?? start
            let after = ops[(lastOK.map { $0 + 1 } ?? 0)...].filter { $0.outcome == .unknown }.map(\.value)
            let before = ops[..<(lastOK ?? 0)].filter { $0.outcome == .unknown }.map(\.value)
            let verdict: String
            if value == base || after.contains(value) {
                verdict = "ok"
            } else if before.contains(value) {
                verdict = "stale"
            } else {
                verdict = lastOK == nil ? "unexplained" : "lost"
            }
            return KeyVerdict(key: key, initial: start, final: value, lastAcknowledged: lastOK.map { ops[$0].value }, verdict: verdict)
        }
    }

    /// Acknowledged votes the upstream never saw: every `feed.vote` answered 2xx must be a
    /// `POST /api/vote` with its id and direction in the Reddit server's log.
    static func votesMissing(history: [Operation], redditLog: URL) -> Int {
        struct Seen: Decodable {
            var method: String
            var path: String
            var form: [String: String]?
        }
        let lines = (FileManager.default.contents(atPath: redditLog.path) ?? Data()).split(separator: UInt8(ascii: "\n"))
        var seen: [String: Int] = [:]
        for line in lines {
            guard let request = try? JSONDecoder().decode(Seen.self, from: Data(line)), request.method == "POST", request.path == "/api/vote",
                let id = request.form?["id"], let dir = request.form?["dir"]
            else { continue }
            seen["\(id) \(dir)", default: 0] += 1
        }
        var missing = 0
        for vote in history where vote.op == "feed.vote" && vote.outcome == .ok {
            let key = "\(vote.key.dropFirst("feed.vote/".count)) \(vote.value)"
            if seen[key, default: 0] > 0 { seen[key]! -= 1 } else { missing += 1 }
        }
        return missing
    }

    /// Calls that returned later than their deadline plus `slack`.
    static func late(history: [Operation], slack: Duration) -> [Operation] {
        history.filter { $0.endMs - $0.startMs > $0.deadlineMs + History.ms(slack) }
    }
}
