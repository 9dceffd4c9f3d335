import BusSupport
import BusWire
import Foundation

/// One option or flag of a command line, in swift-argument-parser's shape: `--kebab-case`
/// names, an optional environment variable and default, help text.
public struct OptionSpec: Sendable {
    public var name: String
    public var short: Character?
    /// Placeholder in help (`URL`, `N`); nil for a flag.
    public var value: String?
    public var help: String
    public var environment: String?
    public var defaultValue: String?
    public var repeatable: Bool

    public init(
        _ name: String, short: Character? = nil, value: String? = nil, help: String,
        environment: String? = nil, default defaultValue: String? = nil, repeatable: Bool = false
    ) {
        self.name = name
        self.short = short
        self.value = value
        self.help = help
        self.environment = environment
        self.defaultValue = defaultValue
        self.repeatable = repeatable
    }

    public var isFlag: Bool { value == nil }

    /// The options every process of the project takes.
    public static let common: [OptionSpec] = [
        OptionSpec(
            "kernel", value: "URL", help: "The kernel's request endpoint; events are on PORT+1 and PORT+2.",
            environment: "BUS_KERNEL", default: Endpoints.defaultKernel),
        OptionSpec("events-in", value: "URL", help: "The kernel's events-in (XSUB) endpoint.", environment: "BUS_EVENTS_IN"),
        OptionSpec("events-out", value: "URL", help: "The kernel's events-out (XPUB) endpoint.", environment: "BUS_EVENTS_OUT"),
        OptionSpec(
            "log-level", value: "LEVEL", help: "trace, debug, info, notice, warning, error or critical.",
            environment: "BUS_LOG_LEVEL", default: "info"),
        OptionSpec(
            "keys", value: "DIR", help: "Turn on CURVE security with the key files in DIR (see busctl keygen).",
            environment: "BUS_KEYS"),
    ]
}

/// A command line that does not parse: printed as one line, then usage; exit status 64.
public struct UsageError: Error, Equatable, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a command line parsed into.
public struct ParsedArguments: Sendable {
    public var values: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []

    /// The last value of an option (given, from its environment variable, or its default).
    public func value(_ name: String) -> String? { values[name]?.last }
    public func all(_ name: String) -> [String] { values[name] ?? [] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// An option as a number, with a usage error naming the option when it is not one.
    public func double(_ name: String) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite, number >= 0 else {
            throw UsageError("--\(name) expects a non-negative number, got '\(text)'")
        }
        return number
    }

    public func int(_ name: String) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), number >= 0 else {
            throw UsageError("--\(name) expects a non-negative whole number, got '\(text)'")
        }
        return number
    }

    /// A duration in seconds given as `--name S`.
    public func seconds(_ name: String) throws(UsageError) -> Duration? {
        guard let value = try double(name) else { return nil }
        return .milliseconds(Int64(value * 1000))
    }

    /// The kernel endpoints from the common options.
    public func endpoints() throws(UsageError) -> Endpoints {
        do {
            return try Endpoints(kernel: value("kernel") ?? Endpoints.defaultKernel, eventsIn: value("events-in"), eventsOut: value("events-out"))
        } catch {
            throw UsageError(error.description)
        }
    }

    /// Client options from the common options: endpoints, log level, and with `--keys` the
    /// CURVE credentials of `identity` (`KEYS/<identity>.key_secret` and `KEYS/kernel.key`).
    /// - Throws: ``UsageError`` for bad options, ``SecurityError`` for unusable keys.
    public func busOptions(name: String, identity: String? = nil) throws -> BusOptions {
        var options = BusOptions(endpoints: try endpoints(), name: name, instance: value("instance"))
        options.logger = Logger(label: name, level: try logLevel())
        if let keys = value("keys") {
            options.security = try ClientSecurity.load(keys: URL(fileURLWithPath: keys), identity: identity ?? name)
        }
        return options
    }

    /// The logger level from `--log-level`.
    public func logLevel() throws(UsageError) -> Logger.Level {
        let name = (value("log-level") ?? "info").lowercased()
        guard let level = Logger.Level.allCases.first(where: { $0.name == name }) else {
            throw UsageError("--log-level must be one of \(Logger.Level.allCases.map(\.name).joined(separator: ", ")), got '\(name)'")
        }
        return level
    }
}

/// Parses `arguments` against `options`. `--name value`, `--name=value`, `-x value`, `--` ends
/// options. Unknown options are usage errors; `--help`/`-h` is reported as the flag `help`.
public func parseArguments(
    _ arguments: [String], options: [OptionSpec], maxPositionals: Int? = nil,
    environment: [String: String] = ProcessInfo.processInfo.environment
) throws(UsageError) -> ParsedArguments {
    var result = ParsedArguments()
    var index = 0
    var onlyPositionals = false
    func spec(named name: String) -> OptionSpec? { options.first { $0.name == name } }
    while index < arguments.count {
        let argument = arguments[index]
        index += 1
        if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
            result.positionals.append(argument)
            continue
        }
        if argument == "--" {
            onlyPositionals = true
            continue
        }
        if argument == "--help" || argument == "-h" {
            result.flags.insert("help")
            continue
        }
        var name: String
        var inline: String?
        if argument.hasPrefix("--") {
            name = String(argument.dropFirst(2))
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
        } else {
            guard argument.count == 2, let found = options.first(where: { $0.short == argument.last }) else {
                if Double(argument) != nil {
                    result.positionals.append(argument)
                    continue
                }
                throw UsageError("unknown option '\(argument)'")
            }
            name = found.name
        }
        guard let option = spec(named: name) else { throw UsageError("unknown option '--\(name)'") }
        if option.isFlag {
            if inline != nil { throw UsageError("--\(name) is a flag and takes no value") }
            result.flags.insert(name)
            continue
        }
        let value: String
        if let inline {
            value = inline
        } else {
            guard index < arguments.count else { throw UsageError("--\(name) needs a value (\(option.value!))") }
            value = arguments[index]
            index += 1
        }
        if option.repeatable {
            result.values[name, default: []].append(value)
        } else {
            result.values[name] = [value]
        }
    }
    for option in options where !option.isFlag && result.values[option.name] == nil {
        if let variable = option.environment, let value = environment[variable], !value.isEmpty {
            result.values[option.name] = [value]
        } else if let value = option.defaultValue {
            result.values[option.name] = [value]
        }
    }
    if let maxPositionals, result.positionals.count > maxPositionals, !result.flags.contains("help") {
        throw UsageError("unexpected argument '\(result.positionals[maxPositionals])'")
    }
    return result
}

/// Help text in swift-argument-parser's layout.
public func helpText(
    command: String, overview: String, usage: String, options: [OptionSpec],
    subcommands: [(String, String)] = [], discussion: String? = nil
) -> String {
    var text = "OVERVIEW: \(overview)\n\nUSAGE: \(command) \(usage)\n"
    if let discussion { text += "\n\(discussion)\n" }
    if !options.isEmpty {
        text += "\nOPTIONS:\n"
        for option in options {
            var left = "  "
            if let short = option.short { left += "-\(short), " }
            left += "--\(option.name)"
            if let value = option.value { left += " <\(value)>" }
            var help = option.help
            if let variable = option.environment { help += " (env: \(variable))" }
            if let value = option.defaultValue { help += " (default: \(value))" }
            text += left.padding(toLength: max(left.count + 2, 30), withPad: " ", startingAt: 0) + help + "\n"
        }
        text += "  -h, --help".padding(toLength: 30, withPad: " ", startingAt: 0) + "Show help information.\n"
    }
    if !subcommands.isEmpty {
        text += "\nSUBCOMMANDS:\n"
        for (name, summary) in subcommands {
            text += "  " + name.padding(toLength: 26, withPad: " ", startingAt: 0) + summary + "\n"
        }
    }
    return text
}
