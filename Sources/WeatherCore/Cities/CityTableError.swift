/// Why the city table could not be loaded.
public enum CityTableError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The TSV is not in the module's resource bundle: a packaging fault.
    case resourceMissing(String)
    /// The file could not be read.
    case unreadable(path: String, reason: String)
    /// A line does not have the documented columns.
    case malformed(line: Int, reason: String)

    public var description: String {
        switch self {
        case .resourceMissing(let name):
            return "the embedded city table \(name) is missing from WeatherCore's resources; rebuild the package"
        case .unreadable(let path, let reason):
            return "cannot read the city table at \(path): \(reason)"
        case .malformed(let line, let reason):
            return "the city table is malformed at line \(line): \(reason); regenerate it with scripts/make-cities"
        }
    }
}
