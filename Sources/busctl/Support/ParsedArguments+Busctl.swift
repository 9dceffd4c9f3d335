import Bus

/// Argument checks busctl's subcommands share.
extension ParsedArguments {
    /// `--name S` as a duration that must be above zero.
    func positiveSeconds(_ name: String) throws(UsageError) -> Duration? {
        guard let value = try double(name) else { return nil }
        guard value > 0 else { throw UsageError("--\(name) must be above 0, got '\(self.value(name) ?? "")'") }
        return .microseconds(Int64(value * 1_000_000))
    }

    /// `--name N` as a count that must be at least 1.
    func positiveInt(_ name: String) throws(UsageError) -> Int? {
        guard let value = try int(name) else { return nil }
        guard value >= 1 else { throw UsageError("--\(name) must be at least 1, got '\(value)'") }
        return value
    }

    /// The positional at `index`, or a usage error naming what is missing.
    func positional(_ index: Int, _ what: String) throws(UsageError) -> String {
        guard index < positionals.count else { throw UsageError("missing \(what)") }
        return positionals[index]
    }
}
