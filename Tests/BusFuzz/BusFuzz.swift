import Foundation
import FuzzTargets

/// The fuzz entry point for every decoder: `BusFuzz TARGET [libFuzzer flags] [CORPUS_DIR...]`.
///
/// scripts/fuzz builds it with `-sanitize=fuzzer,address` and `-D BUS_LIBFUZZER`: then
/// libFuzzer's runtime owns `main` and calls the two C entry points of
/// BusFuzz+LibFuzzer.swift. In the normal build it is a reproducer: it runs the files (or the
/// files of the folders) named after the target once each through the decoder
/// (`swift run BusFuzz mdp .build-fuzz/artifacts/mdp/crash-...`).
enum BusFuzz {
    static let usage = """
        usage: BusFuzz TARGET [libFuzzer flags] [CORPUS_DIR...]
               BusFuzz --write-seeds DIR   (the seeds made by the real encoders, as DIR/TARGET/seed-NAME)
        targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))
        """

    static func fail(_ message: String, code: Int32) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(code)
    }

    /// Writes ``FuzzSeeds`` for every target under `folder`.
    static func writeSeeds(to folder: URL) throws {
        for target in FuzzTarget.allCases {
            let targetFolder = folder.appendingPathComponent(target.rawValue)
            for seed in FuzzSeeds.seeds(for: target) {
                try FileManager.default.createDirectory(at: targetFolder, withIntermediateDirectories: true)
                try Data(seed.bytes).write(to: targetFolder.appendingPathComponent("seed-\(seed.name)"))
            }
        }
    }

    /// Runs every file named (a folder stands for its files) through `target`, printing whether
    /// each decoded or was refused.
    static func replay(_ target: FuzzTarget, paths: [String]) {
        var files: [URL] = []
        for path in paths {
            let url = URL(fileURLWithPath: path)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { fail("no such file: \(path)", code: 66) }
            guard isFolder.boolValue else {
                files.append(url)
                continue
            }
            let children = (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? []
            files += children.sorted { $0.path < $1.path }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file.path) else { fail("cannot read \(file.path)", code: 66) }
            print("\(file.lastPathComponent): \(target.run(Array(data)) ? "decoded" : "refused")")
        }
    }
}

#if !BUS_LIBFUZZER
    @main
    extension BusFuzz {
        static func main() throws {
            let arguments = CommandLine.arguments
            if arguments.count == 3, arguments[1] == "--write-seeds" {
                try writeSeeds(to: URL(fileURLWithPath: arguments[2]))
                return
            }
            guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else { fail(usage, code: 64) }
            replay(target, paths: arguments.dropFirst(2).filter { !$0.hasPrefix("-") })
        }
    }
#endif
