extension CommentTree {
    /// Replaces a `more` stub with the comments `/api/morechildren` returned for it.
    ///
    /// The answer is a flat pre-order list; each thing is placed under its `parent_id`. Things
    /// whose parent is the stub's parent take the stub's place, in Reddit's order; things whose
    /// parent is another comment already in the tree go at the end of that comment's replies.
    /// Ids of the stub that were not requested (it had more than one batch) stay behind as a
    /// smaller stub after the new comments.
    ///
    /// - Parameters:
    ///   - stub: The stub as it is in the tree.
    ///   - requested: The ids sent as `children`; the stub's ``MoreComments/nextBatch`` when nil.
    ///   - things: The answer's things.
    /// - Returns: False when the stub is no longer in the tree (already expanded).
    @discardableResult
    public mutating func expand(_ stub: MoreComments, requested: [String]? = nil, with things: [CommentTreeItem]) -> Bool {
        guard let index = nodes.firstIndex(where: { $0.more == stub }) else { return false }
        let depth = nodes[index].depth
        let returned = Set(
            things.compactMap { item -> String? in
                if case .comment(let comment) = item { return comment.name }
                return nil
            })
        var childrenOf: [String: [CommentTreeItem]] = [:]
        var roots: [CommentTreeItem] = []
        for thing in things {
            if returned.contains(thing.parentID) {
                childrenOf[thing.parentID, default: []].append(thing)
            } else {
                roots.append(thing)
            }
        }
        let present = Set(nodes.compactMap { $0.comment?.name })
        let inPlace = roots.filter { $0.parentID == stub.parentID || !present.contains($0.parentID) }
        let elsewhere = roots.filter { $0.parentID != stub.parentID && present.contains($0.parentID) }

        var replacement: [CommentNode] = []
        for root in inPlace { Self.place(root, depth: depth, children: childrenOf, into: &replacement) }
        let asked = Set(requested ?? stub.nextBatch)
        let left = stub.children.filter { !asked.contains($0) }
        if !left.isEmpty {
            var rest = stub
            rest.children = left
            rest.id = left[0]
            rest.name = "t1_" + left[0]
            rest.count = max(stub.count - asked.count, left.count)
            replacement.append(CommentNode(depth: depth, item: .more(rest)))
        }
        nodes.replaceSubrange(index...index, with: replacement)

        for root in elsewhere {
            guard let parent = nodes.firstIndex(where: { $0.comment?.name == root.parentID }) else { continue }
            var subtree: [CommentNode] = []
            Self.place(root, depth: nodes[parent].depth + 1, children: childrenOf, into: &subtree)
            nodes.insert(contentsOf: subtree, at: subtreeEnd(of: parent))
        }
        return true
    }

    /// Replaces a "continue this thread" stub with the replies of its parent comment, taken from
    /// the comments endpoint called with `focusCommentID` set to the stub's
    /// ``MoreComments/threadCommentID``.
    ///
    /// - Returns: False when the stub is not in the tree or `thread` does not hold its parent.
    @discardableResult
    public mutating func expand(_ stub: MoreComments, withThread thread: CommentTree) -> Bool {
        guard let index = nodes.firstIndex(where: { $0.more == stub }),
            let parent = thread.nodes.firstIndex(where: { $0.comment?.name == stub.parentID })
        else { return false }
        let shift = nodes[index].depth - thread.nodes[parent].depth - 1
        let replies = thread.nodes[(parent + 1)..<thread.subtreeEnd(of: parent)].map { node in
            CommentNode(depth: node.depth + shift, item: node.item)
        }
        nodes.replaceSubrange(index...index, with: replies)
        return true
    }

    private static func place(_ item: CommentTreeItem, depth: Int, children: [String: [CommentTreeItem]], into nodes: inout [CommentNode]) {
        var item = item
        var replies: [CommentTreeItem] = []
        if case .comment(var comment) = item {
            replies = (comment.replies?.children ?? []) + (children[comment.name] ?? [])
            comment.replies = nil
            item = .comment(comment)
        }
        nodes.append(CommentNode(depth: depth, item: item))
        for reply in replies { place(reply, depth: depth + 1, children: children, into: &nodes) }
    }
}
