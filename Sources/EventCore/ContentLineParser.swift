/// Splits an iCalendar stream into unfolded content lines (RFC 5545 §3.1).
///
/// Lines end in CRLF or a bare LF. A line starting with a space or tab continues the previous
/// one. Unfolding works on bytes before UTF-8 decoding, so a fold that splits a multi-byte
/// character joins it back; a logical line that is still not UTF-8 is an error.
enum ContentLineParser {
    static func parse(_ bytes: [UInt8]) throws(ICalendarError) -> [ContentLine] {
        var logical: [(line: Int, bytes: [UInt8])] = []
        var lineNumber = 0
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count {
            lineNumber += 1
            var end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            let next = end + 1
            if end > start && bytes[end - 1] == 0x0D { end -= 1 }
            let physical = bytes[start..<end]
            start = next
            if let first = physical.first, first == 0x20 || first == 0x09 {
                guard !logical.isEmpty else {
                    throw ICalendarError(line: lineNumber, message: "folded continuation line with no line before it")
                }
                logical[logical.count - 1].bytes.append(contentsOf: physical.dropFirst())
            } else if !physical.isEmpty {
                logical.append((lineNumber, Array(physical)))
            }
        }
        var lines: [ContentLine] = []
        lines.reserveCapacity(logical.count)
        for (line, raw) in logical {
            guard let text = String(validating: raw, as: UTF8.self) else {
                throw ICalendarError(line: line, message: "content line is not valid UTF-8")
            }
            lines.append(try parseLine(text, line: line))
        }
        return lines
    }

    /// Parses `name *(";" param) ":" value`.
    static func parseLine(_ text: String, line: Int) throws(ICalendarError) -> ContentLine {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "-" || ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
        }
        func readName() -> String {
            var name = String.UnicodeScalarView()
            while index < scalars.count, isNameScalar(scalars[index]) {
                name.append(scalars[index])
                index += 1
            }
            return String(name).uppercased()
        }
        let name = readName()
        guard !name.isEmpty else {
            throw ICalendarError(line: line, message: "'\(prefix(text))' does not start with a property name")
        }
        var parameters: [ContentLineParameter] = []
        while index < scalars.count, scalars[index] == ";" {
            index += 1
            let parameterName = readName()
            guard !parameterName.isEmpty, index < scalars.count, scalars[index] == "=" else {
                throw ICalendarError(line: line, message: "\(name) has a parameter without 'NAME=' (expected NAME=value)")
            }
            index += 1
            var values: [String] = []
            repeat {
                if index < scalars.count, scalars[index] == "," { index += 1 }
                var value = String.UnicodeScalarView()
                if index < scalars.count, scalars[index] == "\"" {
                    index += 1
                    while index < scalars.count, scalars[index] != "\"" {
                        value.append(scalars[index])
                        index += 1
                    }
                    guard index < scalars.count else {
                        throw ICalendarError(line: line, message: "\(name) parameter \(parameterName) has an unclosed quote")
                    }
                    index += 1
                } else {
                    while index < scalars.count, !";:,\"".unicodeScalars.contains(scalars[index]) {
                        value.append(scalars[index])
                        index += 1
                    }
                }
                values.append(String(value))
            } while index < scalars.count && scalars[index] == ","
            parameters.append(ContentLineParameter(name: parameterName, values: values))
        }
        guard index < scalars.count, scalars[index] == ":" else {
            throw ICalendarError(line: line, message: "\(name) has no ':' before its value")
        }
        let value = String(String.UnicodeScalarView(scalars[(index + 1)...]))
        return ContentLine(name: name, parameters: parameters, value: value, line: line)
    }

    private static func prefix(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}
