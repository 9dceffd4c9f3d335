/// The `{"json": {"errors": [...], "data": {...}}}` wrapper of `api_type=json` calls and of
/// write calls refused with a 200.
struct APIEnvelope<Payload: Decodable>: Decodable {
    struct Body: Decodable {
        var errors: [RedditAPIError]?
        var data: Payload?
    }

    var json: Body
}
