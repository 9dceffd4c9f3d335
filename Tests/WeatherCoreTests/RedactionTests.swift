import Foundation
import Testing

@testable import WeatherCore

struct RedactionTests {
    @Test(arguments: [
        ("https://h/p?q=a&appid=SECRET&units=metric", "https://h/p?q=a&appid=REDACTED&units=metric"),
        ("https://h/p?appid=SECRET", "https://h/p?appid=REDACTED"),
        ("AppId=SECRET and appid=OTHER#f", "AppId=REDACTED and appid=REDACTED#f"),
        ("appid=", "appid="),
        ("no key here", "no key here"),
    ])
    func redact_replacesEveryAppidValue(input: String, expected: String) {
        #expect(Redaction.redact(input) == expected)
    }

    @Test func excerpt_isOneLineCutAndRedacted() {
        let body = Data(("line one\nappid=SECRET\n" + String(repeating: "x", count: 400)).utf8)
        let excerpt = Redaction.excerpt(of: body)
        #expect(!excerpt.contains("\n"))
        #expect(!excerpt.contains("SECRET"))
        #expect(excerpt.hasPrefix("line one appid=REDACTED xxx"))
        #expect(excerpt.hasSuffix("…"))
        #expect(excerpt.count <= 201)
    }

    @Test func excerpt_whenEmpty_saysSo() {
        #expect(Redaction.excerpt(of: Data()) == "(empty body)")
    }
}
