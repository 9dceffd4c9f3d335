extension FeedFeature {
    /// Takes what the previous user's token brought out of the cached listings once `state.viewer`
    /// is someone else (or nobody): their votes and saves are cleared and their front page is
    /// dropped (``CachedListing/shown(to:)``). Their writes still in flight are forgotten, so a
    /// late rollback does not put their vote back.
    static func forgetOtherUsers(in state: inout State, previousViewer: String?) {
        let viewer = state.viewer
        if previousViewer != viewer {
            state.pendingVotes = [:]
            state.pendingSaves = [:]
        }
        for key in state.listingKeys {
            guard let listing = state.listings[key] else { continue }
            let shown = listing.shown(to: viewer)
            if shown != listing { state.listings[key] = shown }
        }
        let listings = state.listings
        state.listingKeys.removeAll { listings[$0] == nil }
    }
}
