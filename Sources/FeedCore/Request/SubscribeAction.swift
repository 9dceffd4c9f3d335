/// The `action` of `/api/subscribe`.
public enum SubscribeAction: String, Sendable, Equatable, CaseIterable, Codable {
    case subscribe = "sub"
    case unsubscribe = "unsub"
}
