import Bus
import ServiceKit

extension FeedFeature {
    /// Votes and saves, optimistic as in the seed (`likes = true`, then the POST): the cached
    /// listings show the change at once and a `pending` event says so; Reddit's answer confirms
    /// it, or undoes it with a `rolled_back` event and the error as the reply.
    func reduceWrite(into state: inout State, _ action: Action) -> Effect<Action> {
        switch action {
        case .voteRequested(let id, let input):
            guard state.isSignedIn else { return .fail(id, Self.signInRequired) }
            guard let direction = VoteDirection(rawValue: input.dir) else {
                return .fail(id, FeedFailure.reddit(.invalidInput(field: "dir", value: String(input.dir), rule: "1, 0 or -1")).serviceError)
            }
            let endpoint = RedditEndpoint.vote(fullname: input.id, direction: direction)
            if let failure = Self.validate(endpoint) { return .fail(id, failure) }
            guard state.pendingVotes[input.id] == nil else {
                return .fail(id, ServiceError(409, "write_in_flight", "a vote on \(input.id) is still waiting for Reddit's answer"))
            }
            let previous = Self.updatePosts(input.id, in: &state) { $0.likes = direction.likes }
            state.pendingVotes[input.id] = PendingWrite(previous: previous?.likes ?? nil)
            let api = self.api
            return .merge(
                .publish("feed.post.voted", FeedEvent.Voted(id: input.id, dir: input.dir, likes: direction.likes, status: .pending)),
                .run(name: "vote") { send in
                    do throws(FeedFailure) {
                        try await api.write(endpoint)
                        await send(.voteFinished(id, input, nil))
                    } catch {
                        await send(.voteFinished(id, input, error))
                    }
                })

        case .voteFinished(let id, let input, let failure):
            let pending = state.pendingVotes.removeValue(forKey: input.id)
            let likes = VoteDirection(rawValue: input.dir)?.likes
            guard let failure else {
                return .merge(
                    .publish("feed.post.voted", FeedEvent.Voted(id: input.id, dir: input.dir, likes: likes, status: .confirmed)),
                    .reply(id, FeedEvent.Voted(id: input.id, dir: input.dir, likes: likes, status: .confirmed)))
            }
            let restored = pending?.previous ?? nil
            // No pending vote: the user who voted signed out and the listings lost their votes.
            if pending != nil { _ = Self.updatePosts(input.id, in: &state) { $0.likes = restored } }
            return .merge(
                .publish(
                    "feed.post.voted",
                    FeedEvent.Voted(id: input.id, dir: input.dir, likes: restored, status: .rolledBack, error: failure.description)),
                .fail(id, failure.serviceError))

        case .saveRequested(let id, let thing, let saved):
            guard state.isSignedIn else { return .fail(id, Self.signInRequired) }
            let endpoint = saved ? RedditEndpoint.save(fullname: thing) : .unsave(fullname: thing)
            if let failure = Self.validate(endpoint) { return .fail(id, failure) }
            guard state.pendingSaves[thing] == nil else {
                return .fail(id, ServiceError(409, "write_in_flight", "a save of \(thing) is still waiting for Reddit's answer"))
            }
            let previous = Self.updatePosts(thing, in: &state) { $0.saved = saved }
            state.pendingSaves[thing] = PendingWrite(previous: previous?.saved ?? !saved)
            let api = self.api
            return .merge(
                .publish("feed.post.saved", FeedEvent.Saved(id: thing, saved: saved, status: .pending)),
                .run(name: saved ? "save" : "unsave") { send in
                    do throws(FeedFailure) {
                        try await api.write(endpoint)
                        await send(.saveFinished(id, id: thing, saved: saved, nil))
                    } catch {
                        await send(.saveFinished(id, id: thing, saved: saved, error))
                    }
                })

        case .saveFinished(let id, let thing, let saved, let failure):
            let pending = state.pendingSaves.removeValue(forKey: thing)
            guard let failure else {
                let event = FeedEvent.Saved(id: thing, saved: saved, status: .confirmed)
                return .merge(.publish("feed.post.saved", event), .reply(id, event))
            }
            let restored = pending?.previous ?? !saved
            if pending != nil { _ = Self.updatePosts(thing, in: &state) { $0.saved = restored } }
            return .merge(
                .publish("feed.post.saved", FeedEvent.Saved(id: thing, saved: restored, status: .rolledBack, error: failure.description)),
                .fail(id, failure.serviceError))

        case .subscribeRequested(let id, let input):
            guard state.isSignedIn else { return .fail(id, Self.signInRequired) }
            guard let action = SubscribeAction(rawValue: input.action) else {
                return .fail(
                    id, FeedFailure.reddit(.invalidInput(field: "action", value: input.action, rule: "sub or unsub")).serviceError)
            }
            let endpoint = RedditEndpoint.subscribe(action: action, subreddit: input.subreddit)
            if let failure = Self.validate(endpoint) { return .fail(id, failure) }
            let api = self.api
            return .run(name: "subscribe") { send in
                do throws(FeedFailure) {
                    try await api.write(endpoint)
                    // The subscription list shows the subreddit as `about` describes it.
                    let about = action == .subscribe ? try await api.subredditAbout(input.subreddit, signedIn: true) : nil
                    await send(.subscribeFinished(id, input, .success(about)))
                } catch {
                    await send(.subscribeFinished(id, input, .failure(error)))
                }
            }

        case .subscribeFinished(let id, let input, .success(let about)):
            let name = input.subreddit.lowercased()
            if state.isSignedIn {
                state.account.subscriptions.removeAll { $0.displayName.lowercased() == name }
                if let about { state.account.subscriptions = SubscriptionCollector.sortedByName(state.account.subscriptions + [about]) }
            }
            let event = FeedEvent.Subscribed(subreddit: input.subreddit, action: input.action)
            return .merge(.publish("feed.subreddit.subscribed", event), .reply(id, event))

        case .subscribeFinished(let id, _, .failure(let failure)):
            return .fail(id, failure.serviceError)

        default:
            return .none
        }
    }

    /// Sets a post's field in every cached listing; returns the post as it was (the first found).
    static func updatePosts(_ fullname: String, in state: inout State, _ change: (inout Post) -> Void) -> Post? {
        var before: Post?
        for key in state.listingKeys {
            guard var listing = state.listings[key] else { continue }
            var touched = false
            for index in listing.posts.indices where listing.posts[index].name == fullname {
                if before == nil { before = listing.posts[index] }
                change(&listing.posts[index])
                touched = true
            }
            if touched { state.listings[key] = listing }
        }
        return before
    }

    /// The 400 for an endpoint whose input does not pass FeedCore's checks.
    static func validate(_ endpoint: RedditEndpoint) -> ServiceError? {
        do {
            _ = try endpoint.route()
            return nil
        } catch {
            return FeedFailure.reddit(error).serviceError
        }
    }
}
