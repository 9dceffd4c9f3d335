/// The properties of one VEVENT the importer uses, checked for syntax but not yet placed in
/// time. Reading every VEVENT this way first is what makes the import all or nothing.
struct VEventFields: Sendable {
    var line: Int
    var uid: String?
    var recurrenceID: ICalendarTime?
    var recurrenceRange: String?
    var sequence = 0
    var summary: String?
    var description: String?
    var location: String?
    var geo: (lat: Double, lon: Double)?
    var categories: [String] = []
    var url: String?
    var status = EventStatus.scheduled
    var capacity: Int?
    var start: ICalendarTime?
    var end: ICalendarTime?
    var duration: ICalendarDuration?
    var rules: [RecurrenceRule.Parsed] = []
    var exceptions: [ICalendarTime] = []
    var hasRDate = false

    /// Properties RFC 5545 §3.6.1 allows at most once in a VEVENT.
    static let singular: Set<String> = [
        "UID", "DTSTART", "DTEND", "DURATION", "RECURRENCE-ID", "SEQUENCE", "SUMMARY", "DESCRIPTION", "LOCATION", "GEO",
        "URL", "STATUS", "X-SWIFTBUS-CAPACITY", "X-SWIFTBUS-STATUS",
    ]

    /// Reads a VEVENT; malformed values and repeated singular properties are errors.
    static func parse(_ component: ICalendarComponent) throws(ICalendarError) -> VEventFields {
        var fields = VEventFields(line: component.line)
        var seen: [String: Int] = [:]
        var cancelled = false
        var postponed = false
        for property in component.properties {
            if singular.contains(property.name) {
                if let first = seen[property.name] {
                    throw ICalendarError(line: property.line, message: "\(property.name) appears again in a VEVENT (first at line \(first))")
                }
                seen[property.name] = property.line
            }
            switch property.name {
            case "UID":
                fields.uid = property.value.isEmpty ? nil : property.value
            case "RECURRENCE-ID":
                fields.recurrenceID = try ICalendarTime.parse(property)
                fields.recurrenceRange = property.parameterValue("RANGE")
            case "SEQUENCE":
                guard let sequence = Int(property.value), sequence >= 0 else {
                    throw ICalendarError(line: property.line, message: "SEQUENCE value '\(property.value)' is not a non-negative integer")
                }
                fields.sequence = sequence
            case "SUMMARY": fields.summary = ICalendarText.unescape(property.value)
            case "DESCRIPTION": fields.description = ICalendarText.unescape(property.value)
            case "LOCATION": fields.location = ICalendarText.unescape(property.value)
            case "URL": fields.url = property.value
            case "CATEGORIES": fields.categories += ICalendarText.splitList(property.value)
            case "GEO": fields.geo = try parseGeo(property)
            case "STATUS":
                switch property.value.uppercased() {
                case "CANCELLED": cancelled = true
                case "CONFIRMED", "TENTATIVE": break
                default:
                    throw ICalendarError(
                        line: property.line, message: "STATUS value '\(property.value)' is not TENTATIVE, CONFIRMED or CANCELLED")
                }
            case "X-SWIFTBUS-STATUS":
                postponed = property.value.uppercased() == "POSTPONED"
            case "X-SWIFTBUS-CAPACITY":
                guard let capacity = Int(property.value), capacity >= 0 else {
                    throw ICalendarError(
                        line: property.line, message: "X-SWIFTBUS-CAPACITY value '\(property.value)' is not a non-negative integer")
                }
                fields.capacity = capacity
            case "DTSTART": fields.start = try ICalendarTime.parse(property)
            case "DTEND": fields.end = try ICalendarTime.parse(property)
            case "DURATION":
                guard let duration = ICalendarDuration.parse(property.value) else {
                    throw ICalendarError(line: property.line, message: "DURATION value '\(property.value)' is not a duration like PT1H30M")
                }
                fields.duration = duration
            case "RRULE": fields.rules.append(try RecurrenceRule.parse(property))
            case "EXDATE": fields.exceptions += try ICalendarTime.parseList(property)
            case "RDATE": fields.hasRDate = true
            default: continue
            }
        }
        fields.status = postponed ? .postponed : cancelled ? .cancelled : .scheduled
        return fields
    }

    private static func parseGeo(_ property: ContentLine) throws(ICalendarError) -> (lat: Double, lon: Double) {
        let parts = property.value.split(separator: ";", omittingEmptySubsequences: false)
        guard parts.count == 2, let lat = Double(parts[0]), let lon = Double(parts[1]), (-90...90).contains(lat),
            (-180...180).contains(lon)
        else {
            throw ICalendarError(
                line: property.line, message: "GEO value '\(property.value)' is not 'latitude;longitude' in degrees")
        }
        return (lat, lon)
    }
}
