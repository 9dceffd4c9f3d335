import Testing

@testable import EventCore

struct ICalendarTextTests {
    @Test func unescape_readsEveryRFCEscape() {
        #expect(ICalendarText.unescape(#"a\\b\;c\,d\ne\Nf"#) == "a\\b;c,d\ne\nf")
    }

    @Test func unescape_whenEscapeIsNotInRFC_keepsTheCharacter() {
        #expect(ICalendarText.unescape(#"12\:30 \"x\" end\"#) == #"12:30 "x" end\"#)
    }

    @Test func escape_writesBackslashSemicolonCommaAndNewline() {
        #expect(ICalendarText.escape("a\\b;c,d\ne\r\nf") == #"a\\b\;c\,d\ne\nf"#)
    }

    @Test func escape_thenUnescape_givesTheTextBack() {
        let text = "Bund; light, show \\ 上海 🎆\nline two\\n literal"
        #expect(ICalendarText.unescape(ICalendarText.escape(text)) == text)
    }

    @Test func splitList_splitsOnlyAtUnescapedCommas() {
        #expect(ICalendarText.splitList(#"MUSIC,Rock\, Pop,A\\,B"#) == ["MUSIC", "Rock, Pop", "A\\", "B"])
    }
}
