#!/usr/bin/env python3
"""An OAuth 2.0 authorization server for tests, built on authlib's RFC implementations and the
standard library's HTTP server (no web framework). Loopback only; everything in memory.

    oauth_server.py [--port 0] [--client-id ID] [--client-secret SECRET]
                    [--redirect-uri URI] [--user NAME] [--scope "a b c"]
                    [--expires-in SECONDS] [--log FILE] [--issued FILE]

What authlib enforces (the parts of the specs under test):
    RFC 6749 authorization-code grant and refresh-token grant, client_secret_basic client
    authentication at the token and revocation endpoints, redirect URI and scope checks;
    RFC 7636 PKCE: authlib verifies the code_verifier against the challenge; this server also
    refuses an authorization request without a challenge or with a method other than S256;
    RFC 7009 token revocation; refresh tokens are rotated on every refresh.

Endpoints (all on http://127.0.0.1:PORT):
    GET  /authorize   the authorization endpoint. The resource owner (--user) is taken as signed
                      in and consenting: a valid request is answered 302 to the client's
                      redirect URI with `code` and `state`; an invalid one with the spec's error.
    POST /token       the token endpoint (authorization_code, refresh_token).
    POST /revoke      the revocation endpoint.
    GET  /userinfo    {"sub", "name", "preferred_username"} for a valid Bearer access token.
    GET  /callback    stands in for the client's loopback redirect URI (RFC 8252 section 7.3):
                      answers 200 with the full URL it was called with, so a test acting as the
                      user's browser can follow the redirect and read the URL the app gets.
    GET  /stats       {"token_requests": N, "revocations": N, "revoked": N} for assertions.

--issued FILE appends every credential the server hands out (authorization codes, access and
refresh tokens), one per line: what a test greps logs and recorded events for, to prove none leaks.

stdout: one line `PORT <n>` (flushed) once the server accepts connections.
SIGTERM or SIGINT stops the server and exits 0. The log (--log, default stderr) has one line
per request with the method, path and status: no query strings, bodies or tokens.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qsl, urlsplit

# The server listens on loopback only; older authlib releases refuse plain http even there
# (newer ones allow loopback per RFC 8252 section 7.3).
os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")

from authlib.common.security import generate_token  # noqa: E402
from authlib.oauth2 import AuthorizationServer, OAuth2Error  # noqa: E402
from authlib.oauth2.rfc6749 import (  # noqa: E402
    AuthorizationCodeMixin,
    ClientMixin,
    InvalidRequestError,
    JsonPayload,
    JsonRequest,
    OAuth2Payload,
    OAuth2Request,
    TokenMixin,
    grants,
)
from authlib.oauth2.rfc6749.util import scope_to_list  # noqa: E402
from authlib.oauth2.rfc6750 import BearerTokenGenerator  # noqa: E402
from authlib.oauth2.rfc7009 import RevocationEndpoint  # noqa: E402
from authlib.oauth2.rfc7636 import CodeChallenge  # noqa: E402


class Client(ClientMixin):
    def __init__(self, client_id, client_secret, redirect_uri, scope):
        self.client_id = client_id
        self.client_secret = client_secret
        self.redirect_uri = redirect_uri
        self.scope = scope

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return self.redirect_uri

    def get_allowed_scope(self, scope):
        if not scope:
            return ""
        allowed = set(scope_to_list(self.scope))
        return " ".join(s for s in scope_to_list(scope) if s in allowed)

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri == self.redirect_uri

    def check_client_secret(self, client_secret):
        return client_secret == self.client_secret

    def check_endpoint_auth_method(self, method, endpoint):
        return method == "client_secret_basic"

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in ("authorization_code", "refresh_token")


class AuthorizationCode(AuthorizationCodeMixin):
    def __init__(self, code, client_id, redirect_uri, scope, user, challenge, method):
        self.code = code
        self.client_id = client_id
        self.redirect_uri = redirect_uri
        self.scope = scope
        self.user = user
        self.code_challenge = challenge
        self.code_challenge_method = method
        self.issued_at = time.time()

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def is_expired(self):
        return time.time() - self.issued_at > 600


class Token(TokenMixin):
    def __init__(self, data, client_id, user):
        self.access_token = data["access_token"]
        self.refresh_token = data.get("refresh_token")
        self.scope = data.get("scope", "")
        self.expires_in = data.get("expires_in", 0)
        self.issued_at = time.time()
        self.client_id = client_id
        self.user = user
        self.access_revoked = False
        self.refresh_revoked = False

    def check_client(self, client):
        return client.get_client_id() == self.client_id

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return self.expires_in

    def is_expired(self):
        return time.time() > self.issued_at + self.expires_in

    def is_revoked(self):
        return self.access_revoked

    def get_user(self):
        return self.user

    def get_client(self):
        return STORE.clients.get(self.client_id)


class Store:
    """Everything the server knows; one lock, the HTTP server is single-threaded anyway."""

    issued_file = None

    def record_issued(self, *values):
        if self.issued_file:
            for value in values:
                if value:
                    self.issued_file.write(value + "\n")
            self.issued_file.flush()

    def __init__(self):
        self.lock = threading.Lock()
        self.clients = {}
        self.codes = {}
        self.tokens = []
        self.token_requests = 0
        self.revocations = 0

    def by_access(self, value):
        return next((t for t in self.tokens if t.access_token == value), None)

    def by_refresh(self, value):
        return next((t for t in self.tokens if t.refresh_token == value), None)


STORE = Store()


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]

    def save_authorization_code(self, code, request):
        payload = request.payload.data
        STORE.record_issued(code)
        STORE.codes[code] = AuthorizationCode(
            code,
            request.client.get_client_id(),
            payload.get("redirect_uri"),
            request.scope,
            request.user,
            payload.get("code_challenge"),
            payload.get("code_challenge_method"),
        )

    def query_authorization_code(self, code, client):
        item = STORE.codes.get(code)
        if item and item.client_id == client.get_client_id() and not item.is_expired():
            return item
        return None

    def delete_authorization_code(self, authorization_code):
        STORE.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code):
        return authorization_code.user


class RefreshGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token):
        token = STORE.by_refresh(refresh_token)
        if token and not token.refresh_revoked:
            return token
        return None

    def authenticate_user(self, refresh_token):
        return refresh_token.user

    def revoke_old_credential(self, refresh_token):
        refresh_token.refresh_revoked = True
        refresh_token.access_revoked = True


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = ["client_secret_basic"]

    def query_token(self, token_string, token_type_hint):
        if token_type_hint == "access_token":
            return STORE.by_access(token_string)
        if token_type_hint == "refresh_token":
            return STORE.by_refresh(token_string)
        return STORE.by_access(token_string) or STORE.by_refresh(token_string)

    def revoke_token(self, token, request):
        STORE.revocations += 1
        hint = request.form.get("token_type_hint")
        token.access_revoked = True
        if hint != "access_token":
            token.refresh_revoked = True


class RequiredS256Challenge(CodeChallenge):
    """authlib's PKCE extension requires PKCE only from public clients; this server requires it
    from every client, and only the S256 method (RFC 7636 section 4.2, RFC 9700 section 2.1.1)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant, redirect_uri):
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: missing 'code_challenge'")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE method must be 'S256'")
        super().validate_code_challenge(grant, redirect_uri)


class Payload(OAuth2Payload):
    def __init__(self, data):
        self._data = data

    @property
    def data(self):
        return self._data

    @property
    def datalist(self):
        values = {}
        for key, value in self._pairs:
            values.setdefault(key, []).append(value)
        return values


class Request(OAuth2Request):
    """An authlib request made from the standard library's parsed request."""

    def __init__(self, method, url, headers, query, form):
        super().__init__(method=method, uri=url, headers=headers)
        self._args = dict(query)
        self._form = dict(form)
        payload = Payload({**self._args, **self._form})
        payload._pairs = list(query) + list(form)
        self.payload = payload

    @property
    def args(self):
        return self._args

    @property
    def form(self):
        return self._form


class Server(AuthorizationServer):
    def query_client(self, client_id):
        return STORE.clients.get(client_id)

    def save_token(self, token, request):
        STORE.record_issued(token.get("access_token"), token.get("refresh_token"))
        STORE.tokens.append(Token(token, request.client.get_client_id(), request.user))

    def create_oauth2_request(self, request):
        return request

    def create_json_request(self, request):
        json_request = JsonRequest(request.method, request.uri, request.headers)

        class Body(JsonPayload):
            data = {}

        json_request.payload = Body()
        return json_request

    def handle_response(self, status, body, headers):
        return status, body, headers

    def send_signal(self, name, *args, **kwargs):
        pass


def build_server(expires_in):
    server = Server()
    server.register_token_generator(
        "default",
        BearerTokenGenerator(
            access_token_generator=lambda **_: generate_token(42),
            refresh_token_generator=lambda **_: generate_token(48),
            expires_generator=lambda client, grant_type: expires_in,
        ),
    )
    server.register_grant(CodeGrant, [RequiredS256Challenge(required=True)])
    server.register_grant(RefreshGrant)
    server.register_endpoint(Revocation)
    return server


class Handler(BaseHTTPRequestHandler):
    server_version = "oauth-test-server"
    oauth = None
    user = None
    log_file = sys.stderr

    def log_message(self, format, *args):
        # Requests are logged by `respond` without query strings (codes, states) or bodies.
        pass

    def respond(self, status, body, headers):
        path = urlsplit(self.path).path
        print(f"{self.command} {path} {status}", file=self.log_file, flush=True)
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        data = (body or "").encode() if isinstance(body, str) else (body or b"")
        self.send_response(status)
        for name, value in headers or []:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def url(self):
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}{self.path}"

    def request_for_authlib(self, form=()):
        query = parse_qsl(urlsplit(self.path).query, keep_blank_values=True)
        return Request(self.command, self.url(), self.headers, query, form)

    def read_form(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if content_type != "application/x-www-form-urlencoded":
            return None
        return parse_qsl(body, keep_blank_values=True)

    def do_GET(self):
        path = urlsplit(self.path).path
        with STORE.lock:
            if path == "/authorize":
                request = self.request_for_authlib()
                try:
                    grant = self.oauth.get_consent_grant(request, end_user=self.user)
                except OAuth2Error as error:
                    status, body, headers = self.oauth.handle_error_response(request, error)
                    return self.respond(status, body, headers)
                return self.respond(*self.oauth.create_authorization_response(request, grant_user=self.user, grant=grant))
            if path == "/userinfo":
                auth = self.headers.get("Authorization") or ""
                token = STORE.by_access(auth[7:]) if auth.lower().startswith("bearer ") else None
                if not token or token.is_revoked() or token.is_expired():
                    return self.respond(401, {"error": "invalid_token"}, [("WWW-Authenticate", 'Bearer error="invalid_token"'), ("Content-Type", "application/json")])
                return self.respond(200, {"sub": token.user, "name": token.user, "preferred_username": token.user}, [("Content-Type", "application/json")])
            if path == "/callback":
                return self.respond(200, self.url(), [("Content-Type", "text/plain")])
            if path == "/stats":
                body = {
                    "token_requests": STORE.token_requests,
                    "revocations": STORE.revocations,
                    "revoked": sum(1 for t in STORE.tokens if t.refresh_revoked),
                }
                return self.respond(200, body, [("Content-Type", "application/json")])
        self.respond(404, {"error": "not_found"}, [("Content-Type", "application/json")])

    def do_POST(self):
        path = urlsplit(self.path).path
        form = self.read_form()
        if form is None:
            return self.respond(400, {"error": "invalid_request", "error_description": "expected a form body"}, [("Content-Type", "application/json")])
        with STORE.lock:
            request = self.request_for_authlib(form)
            if path == "/token":
                STORE.token_requests += 1
                return self.respond(*self.oauth.create_token_response(request))
            if path == "/revoke":
                return self.respond(*self.oauth.create_endpoint_response("revocation", request))
        self.respond(404, {"error": "not_found"}, [("Content-Type", "application/json")])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--client-id", default="swiftbus-test")
    parser.add_argument("--client-secret", default="test-secret")
    parser.add_argument("--redirect-uri", default=None, help="default: http://127.0.0.1:PORT/callback")
    parser.add_argument("--user", default="alice")
    parser.add_argument("--scope", default="identity read submit vote")
    parser.add_argument("--expires-in", type=int, default=3600)
    parser.add_argument("--log", default=None)
    parser.add_argument("--issued", default=None)
    args = parser.parse_args()

    httpd = HTTPServer(("127.0.0.1", args.port), Handler)
    port = httpd.server_address[1]
    redirect_uri = args.redirect_uri or f"http://127.0.0.1:{port}/callback"
    STORE.clients[args.client_id] = Client(args.client_id, args.client_secret, redirect_uri, args.scope)
    Handler.oauth = build_server(args.expires_in)
    Handler.user = args.user
    if args.log:
        Handler.log_file = open(args.log, "a", buffering=1)
    if args.issued:
        STORE.issued_file = open(args.issued, "a")

    stopping = threading.Event()

    def stop(signum, frame):
        if not stopping.is_set():
            stopping.set()
            threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A parent that spawns from a thread with signals blocked (Foundation's Process does) hands
    # that mask down: unblock, or SIGTERM would stay pending forever.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    print(f"PORT {port}", flush=True)
    try:
        httpd.serve_forever(poll_interval=0.1)
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
