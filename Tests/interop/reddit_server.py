#!/usr/bin/env python3
"""A local stand-in for Reddit's API for tests: answers with the JSON of
Tests/FeedCoreTests/Fixtures (Reddit's real shapes) and records what each request carried.
Standard library only; loopback only.

    reddit_server.py --fixtures DIR [--port 0] [--log FILE] [--refuse FULLNAME]... [--unknown-subreddit NAME]...

Both of the feed's hosts point here: token-bearing calls on plain paths (`/api/v1/me`), anonymous
reads on `.json` paths (`/r/swift/hot.json`); the `.json` suffix is dropped before routing.

    GET  /api/v1/me                    me.json
    GET  /subreddits/mine/subscriber   subscriptions_page1.json, or page 2 for after=t5_2s61a
    GET  /api/multi/mine               multis_mine.json
    GET  /r/NAME/about                 about_swift.json for swift, else about_unknown.json
    GET  /r/NAME/comments/ID           comments_1abc1.json
    GET  /r/NAME/SORT, /SORT, /search  subreddit_hot.json
    GET  /api/morechildren             morechildren_c3_c4.json
    POST /api/search_subreddits        search_subreddits.json
    GET  /user/NAME/about              user_about.json; other /user/NAME/WHERE user_overview.json
    POST /api/vote, save, unsave, subscribe   {} ; 403 {"reason": "refused"} when the form's
                                       id is one given with --refuse
    anything else                      404 {"message": "Not Found", "error": 404}

--unknown-subreddit NAME makes r/NAME a subreddit that does not exist: its listings are answered
as Reddit answers them, 302 with `Location: /subreddits/search.json?q=NAME` and an HTML body
(that search path is not served here, so a client that follows the redirect gets a 404).

--reject-token TOKEN answers every call bearing that token 401 with
`www-authenticate: Bearer realm="reddit", error="invalid_token"` (a token Reddit revoked).

Every answer carries x-ratelimit-remaining (598.0, or --ratelimit-remaining), x-ratelimit-used
and x-ratelimit-reset (300 seconds). Calls to user-only paths without
`Authorization: bearer ...` are answered 401, as Reddit does.

--log FILE appends one JSON line per request: {"method", "path", "query", "authorization",
"user_agent", "form"}; tests read it to check the headers sent.
stdout: one line `PORT <n>` (flushed) once the server accepts connections. SIGTERM stops it.
"""
import argparse
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

USER_ONLY = ("/api/v1/me", "/subreddits/mine", "/api/multi/mine", "/api/vote", "/api/save", "/api/unsave", "/api/subscribe")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log")
    parser.add_argument("--refuse", action="append", default=[])
    parser.add_argument("--reject-token", action="append", default=[])
    parser.add_argument("--unknown-subreddit", action="append", default=[])
    parser.add_argument("--ratelimit-remaining", default="598.0")
    args = parser.parse_args()
    lock = threading.Lock()
    log = open(args.log, "a", encoding="utf-8") if args.log else None

    def fixture(name):
        with open(os.path.join(args.fixtures, name), "rb") as handle:
            return handle.read()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def answer(self, status, body, headers=(), content_type="application/json; charset=UTF-8"):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("x-ratelimit-remaining", args.ratelimit_remaining)
            self.send_header("x-ratelimit-used", "2")
            self.send_header("x-ratelimit-reset", "300")
            self.end_headers()
            self.wfile.write(body)

        def handle_any(self, method):
            parts = urlsplit(self.path)
            path = parts.path[:-5] if parts.path.endswith(".json") else parts.path
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            form = {}
            if method == "POST":
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[-1] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            authorization = self.headers.get("Authorization")
            if log:
                record = {"method": method, "path": parts.path, "query": query, "authorization": authorization,
                          "user_agent": self.headers.get("User-Agent"), "form": form}
                with lock:
                    log.write(json.dumps(record) + "\n")
                    log.flush()
            if authorization and authorization.startswith("bearer ") and authorization[7:] in args.reject_token:
                challenge = ("www-authenticate", 'Bearer realm="reddit", error="invalid_token"')
                return self.answer(401, b'{"message": "Unauthorized", "error": 401}', [challenge])
            if path.startswith(USER_ONLY) and not (authorization or "").startswith("bearer "):
                return self.answer(401, b'{"message": "Unauthorized", "error": 401}')
            segments = [s for s in path.split("/") if s]
            if path == "/api/v1/me":
                return self.answer(200, fixture("me.json"))
            if path == "/subreddits/mine/subscriber":
                page = "subscriptions_page2.json" if query.get("after") == "t5_2s61a" else "subscriptions_page1.json"
                return self.answer(200, fixture(page))
            if path == "/api/multi/mine":
                return self.answer(200, fixture("multis_mine.json"))
            if path in ("/api/vote", "/api/save", "/api/unsave", "/api/subscribe") and method == "POST":
                if form.get("id") in args.refuse or form.get("sr_name") in args.refuse:
                    return self.answer(403, b'{"message": "Forbidden", "error": 403, "reason": "refused"}')
                return self.answer(200, b"{}")
            if path == "/api/morechildren":
                return self.answer(200, fixture("morechildren_c3_c4.json"))
            if path == "/api/search_subreddits" and method == "POST":
                return self.answer(200, fixture("search_subreddits.json"))
            if len(segments) == 3 and segments[0] == "r" and segments[2] == "about":
                return self.answer(200, fixture("about_swift.json" if segments[1].lower() == "swift" else "about_unknown.json"))
            if len(segments) >= 4 and segments[0] == "r" and segments[2] == "comments":
                return self.answer(200, fixture("comments_1abc1.json"))
            if len(segments) == 3 and segments[0] == "user":
                return self.answer(200, fixture("user_about.json" if segments[2] == "about" else "user_overview.json"))
            if len(segments) >= 2 and segments[0] == "r" and segments[1].lower() in (n.lower() for n in args.unknown_subreddit):
                location = "/subreddits/search.json?q=" + segments[1]
                page = f'<html><body>Redirecting to <a href="{location}">{location}</a></body></html>'.encode()
                return self.answer(302, page, [("Location", location)], "text/html; charset=UTF-8")
            sorts = ("hot", "new", "rising", "best", "top", "controversial", "search")
            if (len(segments) == 1 and segments[0] in sorts) or (len(segments) == 3 and segments[0] == "r" and segments[2] in sorts):
                return self.answer(200, fixture("subreddit_hot.json"))
            return self.answer(404, b'{"message": "Not Found", "error": 404}')

        def do_GET(self):
            self.handle_any("GET")

        def do_POST(self):
            self.handle_any("POST")

    # Foundation's Process hands its blocked signal mask down to the child.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever(poll_interval=0.1)


if __name__ == "__main__":
    main()
