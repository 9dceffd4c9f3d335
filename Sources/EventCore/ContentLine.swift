/// One unfolded iCalendar content line: `NAME;PARAM=value:VALUE` (RFC 5545 §3.1).
struct ContentLine: Equatable, Sendable {
    /// The property or BEGIN/END name, uppercased.
    var name: String
    /// Parameters in order; names uppercased, values unquoted.
    var parameters: [ContentLineParameter]
    /// The raw value after the first unquoted `:`, not yet unescaped.
    var value: String
    /// The 1-based physical line where this content line starts.
    var line: Int

    /// The values of the first parameter with that name, nil when it is absent.
    func parameter(_ name: String) -> [String]? {
        parameters.first { $0.name == name }?.values
    }

    /// The single value of a parameter, nil when it is absent.
    func parameterValue(_ name: String) -> String? {
        parameter(name)?.first
    }
}
