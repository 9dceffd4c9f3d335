// The auth service: who is signed in, broadcast as the retained `auth.state`; the tokens stay
// here and go only to allowed callers of `token`.
import AuthCore
import Bus
import Foundation
import ServiceKit

await FeatureService.run(
    name: "auth", overview: "Sign-in state for the bus: OAuth 2.0 (PKCE) or local users; publishes auth.state.",
    options: AuthOptions.specs
) { context in
    // A bad option is a UsageError: ServiceMain prints it and exits 64.
    let options = try AuthOptions(context.arguments)
    let logger = context.logger
    let stateDirectory: URL
    do {
        stateDirectory = try context.stateDirectory()
    } catch {
        throw ConfigurationError("cannot create the state directory (--state-dir): \(error)")
    }
    let dependencies = AuthDependencies.live(stateDirectory: stateDirectory, httpTimeout: options.httpTimeout)

    let provider: any IdentityProvider
    switch options.provider {
    case .local:
        do {
            provider = try LocalProvider(
                usersFile: stateDirectory.appendingPathComponent("users.json"), hasher: dependencies.passwordHasher,
                random: dependencies.random, clock: dependencies.clock, accessLifetime: options.accessTTL,
                refreshLifetime: options.refreshTTL, scopes: options.localScopes)
        } catch let error as SecureFileError {
            // A users file others may read (or that cannot be read): exit 78, as for tokens.json.
            throw ConfigurationError(error.description)
        }
        logger.info("local provider", metadata: ["state_dir": stateDirectory.path])
    case .oauth:
        let config = options.oauth!
        provider = OAuthProvider(config: config, http: dependencies.http, clock: dependencies.clock, logger: logger)
        logger.info(
            "oauth provider",
            metadata: [
                "authorize": config.authorizeURL.absoluteString, "token": config.tokenURL.absoluteString,
                "revoke": config.revokeURL?.absoluteString ?? "none", "client_id": config.clientID, "scopes": config.scopes.joined(separator: " "),
            ])
    }

    let feature = AuthFeature(config: options.config, provider: provider, dependencies: dependencies, logger: logger)
    let stored: StoredSession?
    do {
        stored = try feature.loadStoredSession()
    } catch {
        // A token file others may read: the service must not start on it (exit 78).
        throw ConfigurationError("\(error)")
    }
    if options.config.tokenCallers.isEmpty {
        logger.info("no --token-callers: nobody may read the access token")
    } else {
        logger.info("token callers", metadata: ["callers": options.config.tokenCallers.sorted().joined(separator: ",")])
    }
    return feature.definition(stored: stored)
}
