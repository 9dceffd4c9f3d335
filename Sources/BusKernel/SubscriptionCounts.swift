/// The subscription prefixes subscribers announced, each with how many announced it, also
/// grouped by that count: the most used are read from the highest counts down, without a walk
/// over every prefix. Distinct counts are few (n prefixes with distinct counts need at least
/// n·(n+1)/2 subscriptions: at most 447 for 100 000).
struct SubscriptionCounts {
    private var counts: [[UInt8]: Int] = [:]
    private var byCount: [Int: Set<[UInt8]>] = [:]

    /// Distinct prefixes.
    var count: Int { counts.count }

    /// How many subscribers announced `prefix`.
    subscript(prefix: [UInt8]) -> Int? { counts[prefix] }

    mutating func add(_ prefix: [UInt8]) {
        let old = counts[prefix] ?? 0
        move(prefix, from: old, to: old + 1)
    }

    mutating func remove(_ prefix: [UInt8]) {
        guard let old = counts[prefix] else { return }
        move(prefix, from: old, to: old - 1)
    }

    mutating func removeAll() {
        counts = [:]
        byCount = [:]
    }

    /// The `limit` most used prefixes, most used first (equal counts by prefix among those
    /// picked; which of many equal ones are picked is not specified), and how many entries were
    /// looked at to pick them.
    func mostUsed(_ limit: Int) -> (entries: [(prefix: [UInt8], count: Int)], walked: Int) {
        var picked: [(prefix: [UInt8], count: Int)] = []
        var walked = byCount.count
        for count in byCount.keys.sorted(by: >) where picked.count < limit {
            for prefix in byCount[count] ?? [] {
                guard picked.count < limit else { break }
                picked.append((prefix, count))
                walked += 1
            }
        }
        picked.sort { $0.count != $1.count ? $0.count > $1.count : $0.prefix.lexicographicallyPrecedes($1.prefix) }
        return (picked, walked)
    }

    private mutating func move(_ prefix: [UInt8], from old: Int, to new: Int) {
        if old > 0 {
            byCount[old]?.remove(prefix)
            if byCount[old]?.isEmpty == true { byCount[old] = nil }
        }
        if new > 0 {
            byCount[new, default: []].insert(prefix)
            counts[prefix] = new
        } else {
            counts[prefix] = nil
        }
    }
}
