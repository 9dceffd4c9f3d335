import Testing

@testable import Bus
@testable import BusKernel

/// The kernel's ordered topic index: byte order through inserts, removals and chunk splits, and
/// pages from a cursor that visit only the keys they return.
struct SortedKeysTests {
    func keys(_ index: SortedKeys, from start: [UInt8]? = nil, excludingStart: Bool = false, limit: Int = .max) -> [String] {
        var out: [String] = []
        index.forEach(from: start, excludingStart: excludingStart) { key in
            guard out.count < limit else { return false }
            out.append(String(decoding: key, as: UTF8.self))
            return true
        }
        return out
    }

    @Test func insert_manyInAnyOrder_keepsByteOrderAcrossChunks_andIgnoresDuplicates() {
        var index = SortedKeys()
        let names = (0..<5_000).map { "t.\(($0 * 7919) % 5_000)" }
        for name in names { index.insert(Array(name.utf8)) }
        index.insert(Array("t.42".utf8))
        #expect(index.count == 5_000)
        #expect(keys(index) == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    @Test func forEach_fromACursor_startsAfterIt_andStopsWhenAsked() {
        var index = SortedKeys()
        for name in ["a.c", "a.a", "b.a", "a.b", "c"] { index.insert(Array(name.utf8)) }
        #expect(keys(index, from: Array("a.b".utf8), excludingStart: true) == ["a.c", "b.a", "c"])
        #expect(keys(index, from: Array("a.b".utf8)) == ["a.b", "a.c", "b.a", "c"])
        #expect(keys(index, from: Array("a.bb".utf8), excludingStart: true, limit: 2) == ["a.c", "b.a"])
        #expect(keys(index, from: Array("0".utf8)) == ["a.a", "a.b", "a.c", "b.a", "c"])
        #expect(keys(index, from: Array("d".utf8)).isEmpty)
    }

    @Test func remove_takesKeysOut_andARebuildMatchesInserts() {
        var index = SortedKeys()
        let names = (0..<3_000).map { String(format: "k.%05d", $0) }
        for name in names { index.insert(Array(name.utf8)) }
        for name in names.enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) { index.remove(Array(name.utf8)) }
        index.remove(Array("missing".utf8))
        let left = names.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
        #expect(index.count == left.count)
        #expect(keys(index) == left)
        #expect(keys(SortedKeys(left.reversed().map { Array($0.utf8) })) == left)
    }
}
