import BusZMQ

/// A request's or a reply's body on its way through the kernel: its frames, or its one frame
/// still in the message libzmq received it in, which the kernel sends on without copying its
/// bytes (``ZMQMessage``). What the kernel reads of a body on every request (binary meta's
/// soundness and timeout, a reply's status) it reads in place; a body it rewrites or answers an
/// error for it reads as frames.
public enum MessageBody: Equatable {
    case frames(Frames)
    case message(ZMQMessage)

    /// The body as frames: a copy of a message's bytes.
    package var frames: Frames {
        switch self {
        case .frames(let frames): frames
        case .message(let message): [message.bytes]
        }
    }

    /// True for a body of no frames (a message is one frame).
    package var isEmpty: Bool {
        switch self {
        case .frames(let frames): frames.isEmpty
        case .message: false
        }
    }

    /// ``RequestBody/binaryMetaProblem(_:)`` of this request body.
    package var binaryMetaProblem: String? {
        switch self {
        case .frames(let frames): RequestBody.binaryMetaProblem(frames)
        case .message(let message): message.withBytes { RequestBody.binaryMetaProblem(frame: $0) }
        }
    }

    /// ``RequestBody/peekTimeoutMs(_:)`` of this request body.
    package var timeoutMs: Int? {
        switch self {
        case .frames(let frames): return RequestBody.peekTimeoutMs(frames)
        case .message(let message):
            if let binary = message.withBytes({ RequestBody.peekBinaryTimeoutMs(frame: $0) }) { return binary }
            return RequestBody.peekTimeoutMs(frames)
        }
    }

    /// ``ReplyBody/peekStatus(_:)`` of this reply body.
    package var replyStatus: Int? {
        switch self {
        case .frames(let frames): ReplyBody.peekStatus(frames)
        case .message(let message): message.withBytes { ReplyBody.peekStatus($0) }
        }
    }

    /// Equal when their frames are: a body in a message equals the same bytes as one frame.
    public static func == (lhs: MessageBody, rhs: MessageBody) -> Bool {
        switch (lhs, rhs) {
        case (.frames(let a), .frames(let b)): a == b
        case (.message(let a), .message(let b)): a == b
        default: lhs.frames == rhs.frames
        }
    }
}
