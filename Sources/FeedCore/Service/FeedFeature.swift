import Bus
import Foundation
import ServiceKit

/// The feed service's logic, the RedditOs seed's `CurrentUserStore` on the bus: it follows
/// `auth.state` (signed out clears the user; authenticated loads me, every subscription page
/// and the multis; refreshing holds the calls that need the token), serves listings and
/// comments, and makes votes and saves optimistic with a rollback the caller and observers see.
public struct FeedFeature: Feature {
    public typealias State = FeedState
    public typealias Action = FeedAction

    /// The most listings kept (each its own `feed.listing.<key>` topic).
    public static let maxListings = 20
    /// A listing whose JSON is larger is served but not kept: a retained value stays under the
    /// bus's 1 MiB limit.
    public static let maxListingBytes = 900_000

    let api: RedditAPI
    let clock: ServiceClock

    public init(api: RedditAPI, clock: ServiceClock = .live) {
        self.api = api
        self.clock = clock
    }

    public func reduce(into state: inout State, _ action: Action) -> Effect<Action> {
        if action.callsReddit, state.auth?.state == .refreshing {
            state.held.append(action)
            return .none
        }
        switch action {
        case .started:
            state.listingKeys = state.listingKeys.filter { state.listings[$0] != nil }
            return .none

        case .authChanged(let auth):
            return authChanged(&state, auth)

        case .accountLoaded(let account):
            guard state.isSignedIn else { return .none }
            state.account = account
            state.accountLoading = false
            state.accountError = nil
            return .none

        case .accountLoadFailed(let failure):
            state.accountLoading = false
            state.accountError = failure.description
            state.accountSession = nil
            return .none

        case .accountRetryDue:
            guard let auth = state.auth, auth.state == .authenticated, state.accountSession == nil else { return .none }
            state.accountSession = auth.user
            state.accountLoading = true
            return loadAccount()

        case .meRequested(let id):
            guard state.isSignedIn else { return .fail(id, Self.signInRequired) }
            let api = self.api
            let clock = self.clock
            return .run(name: "me") { send in
                do throws(FeedFailure) {
                    let account = try await api.me()
                    await send(.meLoaded(id, .success(account), at: Self.timestamp(clock.now())))
                } catch {
                    await send(.meLoaded(id, .failure(error), at: Self.timestamp(clock.now())))
                }
            }

        case .meLoaded(let id, .success(let user), let at):
            guard state.isSignedIn else { return .fail(id, Self.signInRequired) }
            state.account.user = user
            state.account.fetchedAt = at
            return .reply(id, AccountReply(account: state.account, stale: false))

        case .meLoaded(let id, .failure(let failure), _):
            if failure.isTransient, state.account.user != nil {
                return .reply(id, AccountReply(account: state.account, stale: true))
            }
            return .fail(id, failure.serviceError)

        case .stateRequested(let id):
            return .reply(id, FeedSummary(state))

        case .listingRequested(let id, let query):
            let endpoint: RedditEndpoint
            do {
                endpoint = try query.endpoint()
            } catch {
                return .fail(id, FeedFailure.reddit(error).serviceError)
            }
            let api = self.api
            let clock = self.clock
            let signedIn = state.isSignedIn
            let viewer = state.viewer
            return .run(name: "listing") { send in
                do throws(FeedFailure) {
                    let listing = try await api.posts(endpoint, signedIn: signedIn)
                    await send(.listingLoaded(id, query, .success(listing), at: Self.timestamp(clock.now()), viewer: viewer))
                } catch {
                    await send(.listingLoaded(id, query, .failure(error), at: Self.timestamp(clock.now()), viewer: viewer))
                }
            }

        case .listingLoaded(let id, let query, .success(let listing), let at, let viewer):
            let fetched = CachedListing(
                key: query.key, query: query, posts: listing.children, after: listing.after, before: listing.before, fetchedAt: at,
                viewer: viewer)
            // A listing asked for by a user who signed out meanwhile is not kept with their data.
            guard let cached = fetched.shown(to: state.viewer) else {
                return .reply(id, ListingReply(listing: fetched.withoutUserFields(), stale: false))
            }
            Self.keep(cached, in: &state)
            return .reply(id, ListingReply(listing: cached, stale: false))

        case .listingLoaded(let id, let query, .failure(let failure), _, _):
            if failure.isTransient, let cached = state.listings[query.key] {
                return .reply(id, ListingReply(listing: cached, stale: true))
            }
            return .fail(id, failure.serviceError)

        case .voteRequested, .voteFinished, .saveRequested, .saveFinished, .subscribeRequested, .subscribeFinished:
            return reduceWrite(into: &state, action)

        case .commentsRequested, .moreCommentsRequested, .searchRequested, .searchSubredditsRequested, .userRequested:
            return reducePassThrough(state, action)

        case .answered(let id, .success(let answer)):
            return .reply(id, answer)

        case .answered(let id, .failure(let failure)):
            return .fail(id, failure.serviceError)
        }
    }

    /// The seed's `$authState` sink. Whatever another user's token brought (their votes and saves
    /// in the cached listings, their front page, their account) goes when they are no longer the
    /// one signed in.
    private func authChanged(_ state: inout State, _ auth: AuthView) -> Effect<Action> {
        let previousViewer = state.viewer
        state.auth = auth
        Self.forgetOtherUsers(in: &state, previousViewer: previousViewer)
        var effects: [Effect<Action>] = []
        switch auth.state {
        case .signedOut:
            state.account = .empty
            state.accountLoading = false
            state.accountError = nil
            state.accountSession = nil
            effects.append(.cancel("account"))
        case .authenticated:
            // A token refresh of the same user changes nothing; a new sign-in, another user, a
            // start (restored data, or none) or a failed load loads everything again.
            if state.accountSession != auth.user {
                if let user = auth.user, let shown = state.account.user?.name, shown.lowercased() != user.lowercased() {
                    state.account = .empty
                }
                state.accountSession = auth.user
                state.accountLoading = true
                effects.append(loadAccount())
            }
        case .refreshing:
            return .none
        case .signinInProgress:
            break
        }
        let held = state.held
        state.held = []
        for action in held { effects.append(reduce(into: &state, action)) }
        return .merge(effects)
    }

    /// me, then every subscription page, then the multis, all or nothing.
    private func loadAccount() -> Effect<Action> {
        let api = self.api
        let clock = self.clock
        return .run(id: "account", cancelInFlight: true, name: "account") { send in
            do throws(FeedFailure) {
                let user = try await api.me()
                let subscriptions = try await api.allSubscriptions()
                let multis = try await api.multis()
                let account = FeedAccount(user: user, subscriptions: subscriptions, multis: multis, fetchedAt: Self.timestamp(clock.now()))
                await send(.accountLoaded(account))
            } catch {
                await send(.accountLoadFailed(error))
            }
        }
    }

    /// After a failed account load (Reddit down at start), the load is tried again every
    /// ``accountRetryInterval`` while signed in, besides on every `authenticated`.
    public func timers(for state: State) -> [FeedTimer] {
        guard state.auth?.state == .authenticated, state.accountSession == nil, !state.accountLoading else { return [] }
        return [FeedTimer("account-retry", every: Self.accountRetryInterval, send: .accountRetryDue)]
    }

    public typealias FeedTimer = FeatureTimer<Action>

    /// The time between two tries of a failed account load.
    public static let accountRetryInterval: Duration = .seconds(60)

    /// Keeps `listing` first among the recent ones, unless its JSON is too large for a topic.
    static func keep(_ listing: CachedListing, in state: inout State) {
        guard let bytes = try? JSONEncoder.bus.encode(listing), bytes.count <= maxListingBytes else { return }
        state.listings[listing.key] = listing
        state.listingKeys.removeAll { $0 == listing.key }
        state.listingKeys.insert(listing.key, at: 0)
        while state.listingKeys.count > maxListings {
            let dropped = state.listingKeys.removeLast()
            state.listings[dropped] = nil
        }
    }

    static let signInRequired = ServiceError(
        403, "sign_in_required", "this needs a signed-in Reddit user: sign in with auth first (busctl call auth startSignIn)")

    /// ISO 8601 in UTC, whole seconds.
    static func timestamp(_ date: Date) -> String {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)).formatted(.iso8601)
    }
}
