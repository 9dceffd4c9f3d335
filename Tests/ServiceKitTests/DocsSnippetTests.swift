import Foundation
import Testing

/// docs/SERVICES.md quotes code the package builds: every Swift snippet in it must appear, line
/// for line (indentation aside), in a source file of the kit's example or tests.
struct DocsSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func normalized(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n")
    }

    @Test func everySwiftSnippetInServicesMd_isCodeThePackageBuilds() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/SERVICES.md"), encoding: .utf8)
        let parts = doc.components(separatedBy: "```swift\n").dropFirst()
        let snippets = parts.map { String($0.components(separatedBy: "```")[0]) }
        #expect(snippets.count >= 5)
        var sources = ""
        for folder in ["Examples/CounterService", "Tests/ServiceKitTests"] {
            let url = Self.root.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where name.hasSuffix(".swift") {
                sources += Self.normalized(try String(contentsOf: url.appendingPathComponent(name), encoding: .utf8)) + "\n"
            }
        }
        for snippet in snippets {
            let body = Self.normalized(snippet.trimmingCharacters(in: .newlines))
            #expect(sources.contains(body), "not found in Examples/CounterService or Tests/ServiceKitTests:\n\(snippet)")
        }
    }
}
