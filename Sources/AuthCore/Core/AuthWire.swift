import Bus
import Foundation
import ServiceKit

/// Request payloads of the auth service's methods.
public enum AuthRequest {
    /// `completeSignIn {"redirect_url": "..."}`.
    public struct CompleteSignIn: Decodable, Sendable {
        public var redirectURL: String
        enum CodingKeys: String, CodingKey { case redirectURL = "redirect_url" }
    }

    /// `register` and `login` `{"username": "...", "password": "..."}`.
    public struct Credentials: Decodable, Sendable {
        public var username: String
        public var password: Secret
    }

    /// Methods without input take `{}` (or any object; extra fields are ignored).
    public struct Nothing: Decodable, Sendable {}
}

/// Reply payloads of the auth service's methods.
public enum AuthResponse {
    /// `startSignIn` -> `{"authorize_url": "..."}`.
    public struct SignInStarted: Codable, Sendable, Equatable {
        public var authorizeURL: String
        public init(authorizeURL: String) { self.authorizeURL = authorizeURL }
        enum CodingKeys: String, CodingKey { case authorizeURL = "authorize_url" }
    }

    /// `register` -> `{"user": "..."}`.
    public struct Registered: Codable, Sendable, Equatable {
        public var user: String
        public init(user: String) { self.user = user }
    }

    /// `token` -> `{"access_token", "token_type": "bearer", "expires_at", "user"}`.
    public struct Token: Codable, Sendable, Equatable {
        public var accessToken: Secret
        public var tokenType = "bearer"
        public var expiresAt: String?
        public var user: String?

        public init(accessToken: Secret, expiresAt: String?, user: String?) {
            self.accessToken = accessToken
            self.expiresAt = expiresAt
            self.user = user
        }

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresAt = "expires_at"
            case user
        }
    }

    /// `logout` -> the `auth.state` fields plus `{"revoked": [...], "not_revoked": {kind: why}}`.
    public struct LoggedOut: Encodable, Sendable, Equatable {
        public var snapshot: AuthSnapshot
        public var report: RevocationReport

        public init(snapshot: AuthSnapshot, report: RevocationReport) {
            self.snapshot = snapshot
            self.report = report
        }

        public func encode(to encoder: Encoder) throws {
            try snapshot.encode(to: encoder)
            try report.encode(to: encoder)
        }
    }
}

extension AuthReply {
    /// The reply's JSON payload.
    /// - Throws: the ``ServiceError`` of a `.failure`, which the bus sends as an error reply.
    public func payload() throws(ServiceError) -> [UInt8] {
        switch self {
        case .failure(let error): throw error
        case .authorizeURL(let url): return try Self.json(AuthResponse.SignInStarted(authorizeURL: url))
        case .state(let snapshot): return try Self.json(snapshot)
        case .token(let token, let expiresAt, let user):
            return try Self.json(AuthResponse.Token(accessToken: token, expiresAt: expiresAt.map(ISO8601.string), user: user))
        case .loggedOut(let snapshot, let report): return try Self.json(AuthResponse.LoggedOut(snapshot: snapshot, report: report))
        }
    }

    public static func json<T: Encodable>(_ value: T) throws(ServiceError) -> [UInt8] {
        do {
            return Array(try JSONEncoder.bus.encode(value))
        } catch {
            throw ServiceError(500, "internal", "cannot encode the reply (\(T.self))")
        }
    }
}
