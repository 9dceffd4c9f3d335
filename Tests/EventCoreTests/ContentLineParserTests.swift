import Foundation
import Testing

@testable import EventCore

struct ContentLineParserTests {
    @Test func parse_whenLinesFoldWithSpaceOrTab_unfoldsAndKeepsFirstLineNumber() throws {
        let text = "BEGIN:VCALENDAR\r\nSUMMARY:Hello\r\n  world\r\n\tagain\r\nEND:VCALENDAR\r\n"
        let lines = try ContentLineParser.parse(Array(text.utf8))
        #expect(lines.map(\.name) == ["BEGIN", "SUMMARY", "END"])
        #expect(lines[1].value == "Hello worldagain")
        #expect(lines[1].line == 2)
        #expect(lines[2].line == 5)
    }

    @Test func parse_whenLineEndingsAreBareLF_readsTheSameLines() throws {
        let crlf = try ContentLineParser.parse(Array("A:1\r\nB:2\r\n x\r\n".utf8))
        let lf = try ContentLineParser.parse(Array("A:1\nB:2\n x\n".utf8))
        #expect(crlf == lf)
        #expect(lf.map(\.value) == ["1", "2x"])
    }

    @Test func parse_whenFoldSplitsUTF8Sequence_joinsTheCharacter() throws {
        // "上" is E4 B8 8A; the fold falls after its first byte.
        var bytes = Array("SUMMARY:a".utf8) + [0xE4]
        bytes += Array("\r\n ".utf8) + [0xB8, 0x8A] + Array("海🎆\r\n".utf8)
        let lines = try ContentLineParser.parse(bytes)
        #expect(lines.first?.value == "a上海🎆")
    }

    @Test func parse_whenParametersAreQuotedAndRepeated_readsEveryValue() throws {
        let line = try ContentLineParser.parseLine(
            #"ATTENDEE;ROLE=REQ-PARTICIPANT;DELEGATED-FROM="mailto:a@x.test","mailto:b@x.test";CN="Doe; John":mailto:j@x.test"#,
            line: 3)
        #expect(line.name == "ATTENDEE")
        #expect(line.parameterValue("ROLE") == "REQ-PARTICIPANT")
        #expect(line.parameter("DELEGATED-FROM") == ["mailto:a@x.test", "mailto:b@x.test"])
        #expect(line.parameterValue("CN") == "Doe; John")
        #expect(line.value == "mailto:j@x.test")
    }

    @Test func parse_whenValueHoldsColons_keepsThemInTheValue() throws {
        let line = try ContentLineParser.parseLine("dtstart;tzid=Europe/Berlin:20250301T120000", line: 1)
        #expect(line.name == "DTSTART")
        #expect(line.parameterValue("TZID") == "Europe/Berlin")
        let url = try ContentLineParser.parseLine("URL:https://x.test/a?b=c:d", line: 1)
        #expect(url.value == "https://x.test/a?b=c:d")
    }

    @Test func parse_whenFirstLineIsAContinuation_throwsWithLineOne() {
        #expect(throws: ICalendarError(line: 1, message: "folded continuation line with no line before it")) {
            try ContentLineParser.parse(Array(" x\r\nA:1\r\n".utf8))
        }
    }

    @Test func parse_whenQuoteIsUnclosed_throwsNamingTheParameter() {
        #expect(throws: ICalendarError(line: 4, message: "SUMMARY parameter CN has an unclosed quote")) {
            try ContentLineParser.parseLine(#"SUMMARY;CN="open:value"#, line: 4)
        }
    }

    @Test func parse_whenInputStartsWithByteOrderMark_ignoresIt() throws {
        let lines = try ContentLineParser.parse([0xEF, 0xBB, 0xBF] + Array("BEGIN:VCALENDAR\r\n".utf8))
        #expect(lines.first?.name == "BEGIN")
    }
}
