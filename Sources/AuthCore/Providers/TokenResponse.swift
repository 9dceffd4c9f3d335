import Foundation
import ServiceKit

/// A token endpoint's answer (RFC 6749 sections 5.1 and 5.2), parsed strictly: anything that is
/// not a bearer token with an access token, or a standard error, is the provider's failure.
struct TokenResponse: Decodable {
    var accessToken: String?
    var tokenType: String?
    var expiresIn: Double?
    var refreshToken: String?
    var scope: String?
    var error: String?
    var errorDescription: String?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case scope, error
        case errorDescription = "error_description"
    }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try? c.decodeIfPresent(String.self, forKey: .accessToken)
        tokenType = try? c.decodeIfPresent(String.self, forKey: .tokenType)
        // Some providers send expires_in as a string.
        if let number = try? c.decodeIfPresent(Double.self, forKey: .expiresIn) {
            expiresIn = number
        } else if let text = try? c.decodeIfPresent(String.self, forKey: .expiresIn) {
            expiresIn = Double(text)
        }
        refreshToken = try? c.decodeIfPresent(String.self, forKey: .refreshToken)
        scope = try? c.decodeIfPresent(String.self, forKey: .scope)
        error = try? c.decodeIfPresent(String.self, forKey: .error)
        errorDescription = try? c.decodeIfPresent(String.self, forKey: .errorDescription)
    }

    /// The grant in `response`, with the expiry counted from `sentAt` (when the request left,
    /// so the token is taken to expire no later than it really does).
    static func grant(from response: HTTPResponse, sentAt: Date) throws(ProviderFailure) -> TokenGrant {
        let parsed = try? JSONDecoder().decode(TokenResponse.self, from: response.body)
        // An OAuth error, whatever the status (some providers answer errors with 200).
        if let error = parsed?.error, !error.isEmpty {
            let description = parsed?.errorDescription ?? ""
            if error == "invalid_grant" { throw .invalidGrant(description.isEmpty ? error : description) }
            if error == "temporarily_unavailable" || response.status >= 500 { throw .unavailable("\(error) (HTTP \(response.status))") }
            throw .rejected(error: error, description: description)
        }
        guard (200..<300).contains(response.status) else {
            switch response.status {
            case 502, 503, 504: throw .unavailable("HTTP \(response.status)")
            case 429: throw .unavailable("rate limited (HTTP 429)")
            default: throw .badResponse("HTTP \(response.status) without an OAuth error")
            }
        }
        guard let parsed else { throw .badResponse("the token response is not a JSON object") }
        guard let access = parsed.accessToken, !access.isEmpty else { throw .badResponse("the token response has no access_token") }
        guard parsed.tokenType?.lowercased() == "bearer" else {
            throw .badResponse("token_type is \(parsed.tokenType.map { "'\($0)'" } ?? "missing"), not bearer")
        }
        let expiresAt = parsed.expiresIn.flatMap { $0 > 0 ? sentAt.addingTimeInterval($0) : nil }
        let scopes = parsed.scope.map { $0.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init) } ?? []
        let refresh = parsed.refreshToken.flatMap { $0.isEmpty ? nil : Secret($0) }
        return TokenGrant(accessToken: Secret(access), refreshToken: refresh, expiresAt: expiresAt, scopes: scopes, user: nil)
    }
}
