import Foundation
import FuzzTargets
import Testing

/// Every file of every fuzz corpus (Tests/FuzzCorpus/TARGET/) through the real decoder: the
/// decoder must return or refuse it with its typed error; a crash or a trap fails the whole run,
/// a hang the time limit.
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzCorpus")

    static func files(of target: FuzzTarget) -> [URL] {
        let folder = corpus.appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test(.timeLimit(.minutes(1)), arguments: FuzzTarget.allCases)
    func replay_everyCorpusFile_returnsOrThrows(_ target: FuzzTarget) throws {
        let files = Self.files(of: target)
        #expect(!files.isEmpty, "no corpus for \(target.rawValue) in \(Self.corpus.path)")
        var decoded = 0
        for file in files {
            let bytes = try #require(FileManager.default.contents(atPath: file.path), "cannot read \(file.path)")
            if target.run(Array(bytes)) { decoded += 1 }
        }
        // A corpus that only holds refused inputs would not reach the decoder's deeper parts.
        #expect(decoded > 0, "no input in the \(target.rawValue) corpus decodes")
    }

    @Test func split_ofJoinedFrames_givesTheFrames() {
        let frames: [[UInt8]] = [[], Array("MDPC01".utf8), [0], Array(repeating: 7, count: 300)]
        #expect(FuzzFrames.split(FuzzFrames.join(frames)) == frames)
    }

    @Test func split_whenLengthPastTheEnd_takesTheRest() {
        #expect(FuzzFrames.split([0, 9, 1, 2]) == [[1, 2]])
        #expect(FuzzFrames.split([5]) == [[5]])
    }
}
