/// The case name of an action, without its associated values: what logs and counters show,
/// so a password or a token carried by an action never reaches a log line.
public enum ActionName {
    /// `loginRequested` for `.loginRequested(#3, username: "ann", password: ...)`.
    public static func of(_ action: some Sendable) -> String {
        let mirror = Mirror(reflecting: action)
        if mirror.displayStyle == .enum, let label = mirror.children.first?.label {
            return label
        }
        let text = String(describing: action)
        // A payload-free case prints as its name; anything else is cut at the first bracket.
        return String(text.prefix { $0 != "(" && $0 != " " })
    }
}
