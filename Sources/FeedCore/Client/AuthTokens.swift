import Bus
import Foundation

/// Where the feed gets the Reddit access token: `auth`'s `token` method (request meta caller
/// `feed`), and its `refresh` method after Reddit refused a token with a 401.
///
/// `refresh` is called rather than asking `token` again because `auth` hands out the token it
/// holds until its own clock says it expired: a token Reddit revoked early would come back
/// unchanged. `auth refresh` takes no caller list and the built-in bus policy lets every service
/// call it (only `auth.token` and `bus.reload` are denied by default).
public struct AuthTokens: Sendable {
    /// The current access token.
    public var token: @Sendable () async throws(AuthTokenFailure) -> String
    /// Asks `auth` to refresh the token now.
    public var refresh: @Sendable () async throws(AuthTokenFailure) -> Void

    public init(
        token: @escaping @Sendable () async throws(AuthTokenFailure) -> String,
        refresh: @escaping @Sendable () async throws(AuthTokenFailure) -> Void
    ) {
        self.token = token
        self.refresh = refresh
    }

    private struct TokenReply: Decodable {
        var accessToken: String
        enum CodingKeys: String, CodingKey { case accessToken = "access_token" }
    }

    /// The `auth` service on `bus`, called as `caller`.
    public static func bus(_ bus: BusClient, caller: String = "feed", timeout: Duration = .seconds(15)) -> AuthTokens {
        @Sendable func call(_ method: String) async throws(AuthTokenFailure) -> [UInt8] {
            var meta = RequestMeta()
            meta.caller = caller
            let reply: ReplyBody
            do {
                reply = try await bus.call("auth", method, payload: Array("{}".utf8), timeout: timeout, meta: meta)
            } catch {
                throw .unreachable("auth.\(method): \(error)")
            }
            guard Status.isSuccess(reply.status) else {
                let body = reply.errorBody
                let detail = "auth.\(method) answered \(reply.status) \(body.code): \(body.message)"
                switch (reply.status, body.code) {
                case (409, _), (403, "refresh_expired"), (403, "invalid_grant"), (403, "session_expired"): throw .signedOut(detail)
                case (403, "forbidden"): throw .refused(detail)
                default: throw .unreachable(detail)
                }
            }
            return reply.payload
        }
        return AuthTokens(
            token: { () async throws(AuthTokenFailure) -> String in
                let payload = try await call("token")
                guard let reply = try? JSONDecoder().decode(TokenReply.self, from: Data(payload)), !reply.accessToken.isEmpty else {
                    throw .unreachable("auth.token answered without an access token")
                }
                return reply.accessToken
            },
            refresh: { () async throws(AuthTokenFailure) in _ = try await call("refresh") })
    }
}
