/// The four states of the seed's `authState`, as published in `auth.state`'s `state` field.
public enum AuthPhase: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Nobody is signed in.
    case signedOut
    /// A sign-in started: waiting for the OAuth redirect, exchanging the code, or checking a
    /// password.
    case signinInProgress
    /// Signed in with a usable access token.
    case authenticated
    /// Signed in; a new access token is being fetched with the refresh token.
    case refreshing

    public var description: String { rawValue }
}
