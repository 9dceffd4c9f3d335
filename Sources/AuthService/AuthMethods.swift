import AuthCore
import Bus

/// The `auth` service's methods, each a thin adapter from a request to the runtime.
///
/// | method | payload | reply |
/// |---|---|---|
/// | `startSignIn` | `{}` | `{"authorize_url"}`; state -> signinInProgress (oauth) |
/// | `completeSignIn` | `{"redirect_url"}` | the `auth.state` value; state -> authenticated |
/// | `register` | `{"username", "password"}` | `{"user"}` (local) |
/// | `login` | `{"username", "password"}` | the `auth.state` value (local) |
/// | `refresh` | `{}` | the `auth.state` value, after refreshing |
/// | `logout` | `{}` | the `auth.state` value + `{"revoked": [...], "not_revoked": {kind: why}}` |
/// | `state` | `{}` | the `auth.state` value |
/// | `token` | `{}` | `{"access_token", "token_type": "bearer", "expires_at", "user"}`, listed callers only |
///
/// Errors are structured replies: 403 `invalid_credentials`, 404 `unknown_user`, 400
/// `state_mismatch`, 503 `provider_unavailable`, 503 `provider_error`, 403 `refresh_expired`,
/// 403 `invalid_grant`, 403 `authorization_denied`, 403 `forbidden`, 409 `not_signed_in`,
/// `already_signed_in`, `busy`, `no_signin_in_progress`, 400 `unsupported`, `invalid_redirect`,
/// `invalid_request`, 409 `user_exists`.
enum AuthMethods {
    static func service(runtime: AuthRuntime, concurrency: Int?) -> BusService {
        // Several workers by default: a request waiting on the provider (a code exchange, a
        // refresh) must not hold up `state` or `token`. The runtime actor keeps them in order.
        let service = BusService(name: "auth", concurrency: concurrency ?? 4)
        service.method(
            "startSignIn",
            raw: { request in
                _ = try request.decode(AuthRequest.Nothing.self)
                return try await runtime.startSignIn().payload()
            })
        service.method(
            "completeSignIn",
            raw: { request in
                let input = try request.decode(AuthRequest.CompleteSignIn.self)
                return try await runtime.completeSignIn(redirectURL: input.redirectURL).payload()
            })
        service.method(
            "register",
            raw: { request in
                let input = try request.decode(AuthRequest.Credentials.self)
                switch await runtime.register(username: input.username, password: input.password) {
                case .success(let user): return try AuthReply.json(AuthResponse.Registered(user: user))
                case .failure(let error): throw error
                }
            })
        service.method(
            "login",
            raw: { request in
                let input = try request.decode(AuthRequest.Credentials.self)
                return try await runtime.login(username: input.username, password: input.password).payload()
            })
        service.method(
            "refresh",
            raw: { request in
                _ = try request.decode(AuthRequest.Nothing.self)
                return try await runtime.refresh().payload()
            })
        service.method(
            "logout",
            raw: { request in
                _ = try request.decode(AuthRequest.Nothing.self)
                return try await runtime.logout().payload()
            })
        service.method(
            "state",
            raw: { request in
                _ = try request.decode(AuthRequest.Nothing.self)
                return try await runtime.currentState().payload()
            })
        // The caller is the request meta's `caller`, which any client can set: without security
        // this check keeps honest services out, not a malicious one. With security on, the
        // kernel's per-identity permission for `auth.token` (ZAP User-Id) is the real gate, and
        // this list a second one.
        service.method(
            "token",
            raw: { request in
                _ = try request.decode(AuthRequest.Nothing.self)
                return try await runtime.token(caller: request.meta.caller).payload()
            })
        return service
    }
}
