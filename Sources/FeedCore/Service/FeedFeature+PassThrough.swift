import Bus
import ServiceKit

extension FeedFeature {
    /// Calls answered straight from Reddit: comments, more comments, search, subreddit search,
    /// users.
    func reducePassThrough(_ state: State, _ action: Action) -> Effect<Action> {
        let signedIn = state.isSignedIn
        let api = self.api
        let id: RequestID
        let call: @Sendable () async throws(FeedFailure) -> FeedAnswer
        do throws(RedditError) {
            switch action {
            case .commentsRequested(let requestID, let input):
                id = requestID
                let endpoint = RedditEndpoint.comments(
                    subreddit: input.subreddit, postID: input.id,
                    sort: try input.sort.map { text throws(RedditError) in try CommentSort(parsing: text) })
                _ = try endpoint.route()
                call = { () async throws(FeedFailure) in .comments(try await api.comments(endpoint, signedIn: signedIn)) }
            case .moreCommentsRequested(let requestID, let input):
                id = requestID
                let endpoint = RedditEndpoint.moreChildren(
                    postID: input.id, children: input.children,
                    sort: try input.sort.map { text throws(RedditError) in try CommentSort(parsing: text) })
                _ = try endpoint.route()
                let parent = "t3_" + (input.id.hasPrefix("t3_") ? String(input.id.dropFirst(3)) : input.id)
                call = { () async throws(FeedFailure) in
                    let things = try await api.moreChildren(endpoint, signedIn: signedIn)
                    // Rebuilt into a subtree: the things under the post or under one another,
                    // depths counted from the shallowest returned.
                    var tree = CommentTree(nodes: [
                        CommentNode(
                            depth: 0,
                            item: .more(MoreComments(id: "_", name: "t1__", parentID: parent, count: things.count, children: input.children)))
                    ])
                    _ = tree.expand(tree.moreStubs[0], requested: input.children, with: things)
                    return .moreComments(tree.nodes)
                }
            case .searchRequested(let requestID, let input):
                id = requestID
                let sort = try input.sort.map { text throws(RedditError) in try SearchSort(parsing: text) }
                let time = try input.t.map { text throws(RedditError) in try TimeRange(parsing: text) }
                let endpoint = RedditEndpoint.search(
                    query: input.q, sort: sort, time: time, subreddit: input.subreddit, page: PageRequest(limit: input.limit, after: input.after))
                _ = try endpoint.route()
                call = { () async throws(FeedFailure) in .posts(try await api.posts(endpoint, signedIn: signedIn)) }
            case .searchSubredditsRequested(let requestID, let input):
                id = requestID
                _ = try RedditEndpoint.searchSubreddits(query: input.query).route()
                call = { () async throws(FeedFailure) in .subreddits(try await api.searchSubreddits(input.query, signedIn: signedIn)) }
            case .userRequested(let requestID, let input):
                id = requestID
                let place = input.where ?? "about"
                if place == "about" {
                    _ = try RedditEndpoint.userAbout(username: input.name).route()
                    call = { () async throws(FeedFailure) in .account(try await api.userAbout(input.name, signedIn: signedIn)) }
                } else {
                    guard let listing = UserListing(rawValue: place) else {
                        throw .invalidInput(field: "where", value: place, rule: "about, overview, submitted, comments or saved")
                    }
                    let endpoint = RedditEndpoint.user(username: input.name, listing: listing, page: PageRequest(after: input.after))
                    _ = try endpoint.route()
                    if endpoint.needsUser, !signedIn { return .fail(requestID, Self.signInRequired) }
                    call = { () async throws(FeedFailure) in .userContent(try await api.userContent(endpoint, signedIn: signedIn)) }
                }
            default:
                return .none
            }
        } catch {
            guard let requestID = Self.requestID(of: action) else { return .none }
            return .fail(requestID, FeedFailure.reddit(error).serviceError)
        }
        return .run(name: ActionName.of(action)) { send in
            do throws(FeedFailure) {
                await send(.answered(id, .success(try await call())))
            } catch {
                await send(.answered(id, .failure(error)))
            }
        }
    }

    static func requestID(of action: Action) -> RequestID? {
        switch action {
        case .commentsRequested(let id, _), .moreCommentsRequested(let id, _), .searchRequested(let id, _),
            .searchSubredditsRequested(let id, _), .userRequested(let id, _):
            return id
        default:
            return nil
        }
    }
}
