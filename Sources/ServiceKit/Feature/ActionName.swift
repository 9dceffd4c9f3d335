/// The case name of an action, without its associated values: what logs and counters show,
/// so a password or a token carried by an action never reaches a log line.
public enum ActionName {
    /// `loginRequested` for `.loginRequested(#3, username: "ann", password: ...)`; a case that
    /// wraps another feature's action names both: `auth.loginRequested`.
    public static func of(_ action: some Sendable) -> String {
        name(of: action)
    }

    private static func name(of action: Any) -> String {
        let mirror = Mirror(reflecting: action)
        if mirror.displayStyle == .enum, let child = mirror.children.first, let label = child.label {
            if Mirror(reflecting: child.value).displayStyle == .enum { return label + "." + name(of: child.value) }
            return label
        }
        let text = String(describing: action)
        // A payload-free case prints as its name; anything else is cut at the first bracket.
        return String(text.prefix { $0 != "(" && $0 != " " })
    }
}
