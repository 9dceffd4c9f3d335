/// Byte strings (topics) kept in byte order, in chunks of at most ``chunkLimit``: adding or
/// removing one moves at most a chunk's worth of references, and the keys from any point on are
/// a binary search away. `bus.stats` and `bus.retained` page through it by cursor, so a call
/// walks the keys it answers with, never all of them.
struct SortedKeys {
    /// A chunk is split in two when it reaches this size.
    static let chunkLimit = 1024

    private var chunks: [[[UInt8]]] = []
    /// The number of keys.
    private(set) var count = 0

    init() {}

    /// The keys in byte order (for a rebuild after many removals).
    init<S: Sequence>(_ keys: S) where S.Element == [UInt8] {
        let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
        count = sorted.count
        var start = 0
        while start < sorted.count {
            let end = min(sorted.count, start + Self.chunkLimit / 2)
            chunks.append(Array(sorted[start..<end]))
            start = end
        }
    }

    /// Adds `key` (nothing when it is there already).
    mutating func insert(_ key: [UInt8]) {
        guard !chunks.isEmpty else {
            chunks = [[key]]
            count = 1
            return
        }
        let chunk = chunkIndex(for: key)
        let index = Self.firstIndex(notBefore: key, in: chunks[chunk])
        if index < chunks[chunk].count, chunks[chunk][index] == key { return }
        chunks[chunk].insert(key, at: index)
        count += 1
        if chunks[chunk].count >= Self.chunkLimit {
            let half = chunks[chunk].count / 2
            let upper = Array(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunks.insert(upper, at: chunk + 1)
        }
    }

    /// Removes `key` if it is there.
    mutating func remove(_ key: [UInt8]) {
        guard !chunks.isEmpty else { return }
        let chunk = chunkIndex(for: key)
        let index = Self.firstIndex(notBefore: key, in: chunks[chunk])
        guard index < chunks[chunk].count, chunks[chunk][index] == key else { return }
        chunks[chunk].remove(at: index)
        count -= 1
        if chunks[chunk].isEmpty { chunks.remove(at: chunk) }
    }

    mutating func removeAll() {
        chunks = []
        count = 0
    }

    /// Calls `body` with each key from `start` on (from the first when nil; after it when
    /// `excludingStart`), in order, until it returns false.
    func forEach(from start: [UInt8]?, excludingStart: Bool = false, _ body: ([UInt8]) -> Bool) {
        guard !chunks.isEmpty else { return }
        var chunk = 0
        var index = 0
        if let start {
            chunk = chunkIndex(for: start)
            index = Self.firstIndex(notBefore: start, in: chunks[chunk])
            if excludingStart, index < chunks[chunk].count, chunks[chunk][index] == start { index += 1 }
        }
        while chunk < chunks.count {
            let keys = chunks[chunk]
            while index < keys.count {
                guard body(keys[index]) else { return }
                index += 1
            }
            chunk += 1
            index = 0
        }
    }

    /// The chunk `key` belongs in: the last whose first key is not after it (the first chunk
    /// for a key before every key).
    private func chunkIndex(for key: [UInt8]) -> Int {
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if key.lexicographicallyPrecedes(chunks[middle][0]) { high = middle } else { low = middle + 1 }
        }
        return max(0, low - 1)
    }

    /// The first position in `keys` whose key is not before `key`.
    private static func firstIndex(notBefore key: [UInt8], in keys: [[UInt8]]) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].lexicographicallyPrecedes(key) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
