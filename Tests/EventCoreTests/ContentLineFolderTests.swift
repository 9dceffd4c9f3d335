import Testing

@testable import EventCore

struct ContentLineFolderTests {
    @Test func fold_whenLineIsLong_keepsEveryPhysicalLineWithin75Octets() {
        let line = "DESCRIPTION:" + String(repeating: "上海外滩🎆ab", count: 30)
        let folded = ContentLineFolder.fold(line)
        let physical = folded.split(separator: "\r\n", omittingEmptySubsequences: true)
        #expect(physical.count > 5)
        #expect(physical.allSatisfy { $0.utf8.count <= 75 })
        #expect(physical.dropFirst().allSatisfy { $0.hasPrefix(" ") })
        // Splitting at scalar boundaries keeps every physical line valid UTF-8 on its own.
        #expect(physical.allSatisfy { String(validating: Array($0.utf8), as: UTF8.self) != nil })
    }

    @Test func fold_whenLineFitsExactly_doesNotFold() {
        let line = "SUMMARY:" + String(repeating: "x", count: 67)
        #expect(ContentLineFolder.fold(line) == line + "\r\n")
        #expect(ContentLineFolder.fold(line + "y") == line + "\r\n y\r\n")
    }

    @Test func fold_thenParse_givesTheLineBack() throws {
        let line = "SUMMARY:" + String(repeating: "灯光秀🎆 light show; ", count: 12)
        let parsed = try ContentLineParser.parse(Array(ContentLineFolder.fold(line).utf8))
        #expect(parsed.count == 1)
        #expect("SUMMARY:" + (parsed.first?.value ?? "") == line)
    }
}
