import AuthCore
import Bus

/// The `auth` service's methods, each a thin adapter from a request to the runtime.
enum AuthMethods {
    static func service(runtime: AuthRuntime) -> BusService {
        // Several workers: a request waiting on the provider (a code exchange, a refresh) must
        // not hold up `state` or `token`. The runtime actor keeps them in order.
        let service = BusService(name: "auth", concurrency: 4)
        service.method("startSignIn", raw: { request in
            _ = try request.decode(AuthRequest.Nothing.self)
            return try await runtime.startSignIn().payload()
        })
        service.method("completeSignIn", raw: { request in
            let input = try request.decode(AuthRequest.CompleteSignIn.self)
            return try await runtime.completeSignIn(redirectURL: input.redirectURL).payload()
        })
        service.method("register", raw: { request in
            let input = try request.decode(AuthRequest.Credentials.self)
            switch await runtime.register(username: input.username, password: input.password) {
            case .success(let user): return try AuthReply.json(AuthResponse.Registered(user: user))
            case .failure(let error): throw error
            }
        })
        service.method("login", raw: { request in
            let input = try request.decode(AuthRequest.Credentials.self)
            return try await runtime.login(username: input.username, password: input.password).payload()
        })
        service.method("refresh", raw: { request in
            _ = try request.decode(AuthRequest.Nothing.self)
            return try await runtime.refresh().payload()
        })
        service.method("logout", raw: { request in
            _ = try request.decode(AuthRequest.Nothing.self)
            return try await runtime.logout().payload()
        })
        service.method("state", raw: { request in
            _ = try request.decode(AuthRequest.Nothing.self)
            return try await runtime.currentState().payload()
        })
        // The caller is the request meta's `caller`, which any client can set: until the kernel
        // enforces identities (CURVE/ZAP, the security milestone), this check keeps honest
        // services out, not a malicious one. Then the kernel's per-service request permission
        // for `auth.token` is the real gate, and this list a second one.
        service.method("token", raw: { request in
            _ = try request.decode(AuthRequest.Nothing.self)
            return try await runtime.token(caller: request.meta.caller).payload()
        })
        return service
    }
}
