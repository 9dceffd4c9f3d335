/// A service cannot start with the configuration it was given (a key file others may read, a
/// missing setting in a config file): ``ServiceMain`` prints it as one line and exits 78
/// (EX_CONFIG). A bad command-line argument is a ``UsageError`` instead (exit 64).
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
