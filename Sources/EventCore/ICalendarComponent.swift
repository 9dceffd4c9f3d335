/// A `BEGIN:NAME` ... `END:NAME` block with its properties and nested blocks.
struct ICalendarComponent: Sendable {
    /// Uppercased component name (`VCALENDAR`, `VEVENT`, ...).
    var name: String
    /// The line of `BEGIN`.
    var line: Int
    var properties: [ContentLine] = []
    var components: [ICalendarComponent] = []

    /// All properties with that name, in order.
    func properties(_ name: String) -> [ContentLine] {
        properties.filter { $0.name == name }
    }

    /// The first property with that name.
    func property(_ name: String) -> ContentLine? {
        properties.first { $0.name == name }
    }

    /// Builds the `VCALENDAR` blocks of a document, checking that BEGIN and END nest.
    static func calendars(from lines: [ContentLine]) throws(ICalendarError) -> [ICalendarComponent] {
        var stack: [ICalendarComponent] = []
        var calendars: [ICalendarComponent] = []
        for line in lines {
            switch line.name {
            case "BEGIN":
                let name = line.value.uppercased()
                guard !name.isEmpty else { throw ICalendarError(line: line.line, message: "BEGIN without a component name") }
                guard !stack.isEmpty || name == "VCALENDAR" else {
                    throw ICalendarError(line: line.line, message: "BEGIN:\(name) outside BEGIN:VCALENDAR")
                }
                stack.append(ICalendarComponent(name: name, line: line.line))
            case "END":
                let name = line.value.uppercased()
                guard let open = stack.last else {
                    throw ICalendarError(line: line.line, message: "END:\(name) without BEGIN:\(name)")
                }
                guard open.name == name else {
                    if stack.contains(where: { $0.name == name }) {
                        throw ICalendarError(
                            line: line.line, message: "END:\(name) while BEGIN:\(open.name) at line \(open.line) is still open")
                    }
                    throw ICalendarError(line: line.line, message: "END:\(name) without BEGIN:\(name)")
                }
                let closed = stack.removeLast()
                if stack.isEmpty {
                    calendars.append(closed)
                } else {
                    stack[stack.count - 1].components.append(closed)
                }
            default:
                guard !stack.isEmpty else {
                    throw ICalendarError(line: line.line, message: "\(line.name) outside BEGIN:VCALENDAR")
                }
                stack[stack.count - 1].properties.append(line)
            }
        }
        if let open = stack.last {
            throw ICalendarError(line: open.line, message: "BEGIN:\(open.name) is never closed by END:\(open.name)")
        }
        guard !calendars.isEmpty else {
            throw ICalendarError(line: lines.first?.line ?? 1, message: "no BEGIN:VCALENDAR in the document")
        }
        return calendars
    }
}
