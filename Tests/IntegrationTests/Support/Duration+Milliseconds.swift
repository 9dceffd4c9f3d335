extension Duration {
    /// Whole milliseconds, for printed figures.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
