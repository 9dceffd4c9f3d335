/// The first `k` elements of a sequence in an order, without sorting all of it: one pass that
/// keeps the best `k` seen in a sorted array (n log k comparisons; an element that is not among
/// the best so far costs one).
enum TopK {
    static func smallest<S: Sequence>(_ k: Int, of elements: S, by less: (S.Element, S.Element) -> Bool) -> [S.Element] {
        guard k > 0 else { return [] }
        var best: [S.Element] = []
        best.reserveCapacity(min(k, 1024))
        for element in elements {
            if best.count == k {
                guard less(element, best[k - 1]) else { continue }
                best.removeLast()
            }
            var low = 0
            var high = best.count
            while low < high {
                let middle = (low + high) / 2
                if less(element, best[middle]) { high = middle } else { low = middle + 1 }
            }
            best.insert(element, at: low)
        }
        return best
    }
}
