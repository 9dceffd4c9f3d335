/// One token refresh at a time for every request of the service.
///
/// When Reddit refuses a token, every request then in flight gets a 401 with it. The first to
/// arrive asks `auth` to refresh; the others wait for that refresh and take its token, so `auth`
/// sees one refresh (one token request to the provider) for any number of 401s. A 401 that comes
/// after the refresh finished finds the token already replaced and only takes the new one.
actor TokenRefresher {
    private var flight: Task<Result<String, AuthTokenFailure>, Never>?

    /// The token to retry with after Reddit refused `rejected`: the same token back means the
    /// refresh did not bring a new one.
    func token(replacing rejected: String, from tokens: AuthTokens) async -> Result<String, AuthTokenFailure> {
        if let flight { return await flight.value }
        let task = Task { () async -> Result<String, AuthTokenFailure> in
            if case .success(let current) = await Self.current(tokens), current != rejected { return .success(current) }
            // A refresh auth cannot do (a provider error, already refreshing) is not the caller's
            // failure: the token asked for next tells whether a new one came.
            try? await tokens.refresh()
            return await Self.current(tokens)
        }
        flight = task
        let result = await task.value
        flight = nil
        return result
    }

    private static func current(_ tokens: AuthTokens) async -> Result<String, AuthTokenFailure> {
        do {
            return .success(try await tokens.token())
        } catch {
            return .failure(error)
        }
    }
}
