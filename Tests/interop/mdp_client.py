#!/usr/bin/env python3
"""A Majordomo client written from the 7/MDP text (MDPC01), pyzmq and the standard library only.

    mdp_client.py --kernel tcp://127.0.0.1:PORT --service S
                  (--frames F1 [F2 ...] | --method M [--payload JSON] [--meta JSON] | --mmi NAME)
                  [--socket req|dealer] [--timeout SECONDS] [--count N]
                  [--form three|one-frame|binary-meta]
                  [--keys DIR --identity NAME]

7/MDP client frames:
    REQ    sends [MDPC01][service][body...]      receives [MDPC01][service][body...]
    DEALER sends [""][MDPC01][service][body...]  receives [""][MDPC01][service][body...]
(a REQ socket adds and strips the empty delimiter frame itself).

The body is --frames verbatim, or the bus body of docs/PROTOCOL.md built from --method:
[method][meta JSON {"id", "timeout_ms", ...--meta}][payload]. --mmi NAME asks the 8/MMI
service `mmi.service` whether NAME has a worker (body [NAME], reply ["200"|"404"|"501"]).
With --method, --form one-frame packs that body into one frame (docs/PROTOCOL.md, "One-frame
bodies": 0xB5, u8 method length, method, u16 meta length, meta, payload) and --form
binary-meta also writes its meta as binary meta ("Binary meta": 0x01, u64 id, u32 timeout_ms,
u8 caller length, caller; the id is the request's number, the caller "py-mdp-client").

stdout, one JSON line per reply (flushed):
    {"service": S, "frames": [body frames as UTF-8], "status": int|null, "meta": obj|null,
     "payload": obj|null, "elapsed_ms": float}
status is the first body frame when it is 3 ASCII digits; meta and payload are the 2nd and
3rd body frames parsed as JSON when status is set (null otherwise or when not JSON). A one-frame
reply is unpacked the same way, binary meta read into {"id", "from", "elapsed_us"}, and the line
also has "form": "one-frame" or "binary-meta" ("three" otherwise).
Requests are sent one after another (--count N), each waiting for its reply.

Security (a kernel started with --keys, docs/PROTOCOL.md "Security"): --keys DIR (default
$BUS_KEYS) and --identity NAME set CURVE on the socket before it connects: the client's key
pair from DIR/NAME.key_secret, the kernel's public key from DIR/kernel.key (both read with
zmq.auth.load_certificate). A key the kernel does not admit fails the handshake: no reply,
exit 3.

Exit status: 0 every reply arrived, 3 no reply within --timeout, 1 other failure
(a reply that is not MDPC01, a wrong service), 2 bad arguments.
"""
import argparse
import json
import os
import random
import signal
import struct
import sys
import time

import zmq

MDPC01 = b"MDPC01"


class Failure(Exception):
    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("error: %s\n" % message)
        sys.exit(2)


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), sort_keys=True) + "\n")
    sys.stdout.flush()


def text(frame):
    return frame.decode("utf-8", "backslashreplace")


def parse_json(frame):
    if not frame:
        return None
    try:
        return json.loads(frame)
    except ValueError:
        return None


def curve_credentials(keys, identity):
    """(public, secret, kernel public) for CURVE, from czmq/pyzmq certificate files."""
    import zmq.auth
    try:
        public, secret = zmq.auth.load_certificate(os.path.join(keys, identity + ".key_secret"))
        kernel, _ = zmq.auth.load_certificate(os.path.join(keys, "kernel.key"))
    except (OSError, ValueError) as error:
        raise Failure("cannot load the CURVE keys of %r from %s: %s" % (identity, keys, error), 2)
    if not secret:
        raise Failure("%s has no secret key" % os.path.join(keys, identity + ".key_secret"), 2)
    return public, secret, kernel


def one_frame_request(method, meta, payload):
    return b"\xb5" + bytes([len(method)]) + method + struct.pack(">H", len(meta)) + meta + payload


def binary_request_meta(number, timeout_ms, caller):
    return b"\x01" + struct.pack(">QIB", number, timeout_ms, len(caller)) + caller


def binary_reply_meta(meta):
    """{"id", "from", "elapsed_us"} of binary reply meta; None when its length is wrong."""
    if len(meta) < 14 or len(meta) != 14 + meta[13]:
        return None
    number, elapsed, _ = struct.unpack(">QIB", meta[1:14])
    out = {"id": str(number)}
    if meta[14:]:
        out["from"] = meta[14:].decode("utf-8", "backslashreplace")
    if elapsed != 0xFFFFFFFF:
        out["elapsed_us"] = elapsed
    return out


def unpack_one_frame_reply(frame):
    """(status, meta, payload, form) of a one-frame reply body; None when it is not one."""
    if len(frame) < 5 or frame[0] != 0xB5:
        return None
    status, meta_length = struct.unpack(">HH", frame[1:5])
    if len(frame) < 5 + meta_length:
        return None
    meta, payload = frame[5:5 + meta_length], frame[5 + meta_length:]
    if meta[:1] == b"\x01":
        return status, binary_reply_meta(meta), parse_json(payload), "binary-meta"
    return status, parse_json(meta), parse_json(payload), "one-frame"


def describe(body):
    if len(body) == 1:
        unpacked = unpack_one_frame_reply(body[0])
        if unpacked is not None:
            return unpacked
    status = None
    if body and len(body[0]) == 3 and body[0].isdigit():
        status = int(body[0])
    meta = parse_json(body[1]) if status is not None and len(body) > 1 else None
    payload = parse_json(body[2]) if status is not None and len(body) > 2 else None
    return status, meta, payload, "three"


def main():
    parser = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", default=os.environ.get("BUS_KERNEL", "tcp://127.0.0.1:5555"))
    parser.add_argument("--socket", choices=["req", "dealer"], default="req")
    parser.add_argument("--service", help="service name (not needed with --mmi)")
    body = parser.add_mutually_exclusive_group(required=True)
    body.add_argument("--frames", nargs="+", metavar="F", help="raw body frames (UTF-8)")
    body.add_argument("--method", help="build the bus body [method][meta][payload]")
    body.add_argument("--mmi", metavar="NAME", help="ask mmi.service whether NAME has a worker")
    parser.add_argument("--payload", default="{}", help="JSON payload for --method (default {}; '' for empty)")
    parser.add_argument("--meta", default=None, help="JSON object merged into the request meta")
    parser.add_argument("--form", choices=["three", "one-frame", "binary-meta"], default="three",
                        help="body form for --method (default three frames)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for each reply (default 5)")
    parser.add_argument("--count", type=int, default=1, help="requests to send, one after another")
    parser.add_argument("--keys", default=os.environ.get("BUS_KEYS") or None,
                        help="CURVE: folder with NAME.key_secret and kernel.key (default $BUS_KEYS)")
    parser.add_argument("--identity", help="CURVE: the identity whose key pair to use (needed with --keys)")
    args = parser.parse_args()
    if args.keys and not args.identity:
        parser.error("--keys (or $BUS_KEYS) needs --identity NAME")
    credentials = curve_credentials(args.keys, args.identity) if args.keys else None

    if args.mmi is not None:
        service, frames_of = "mmi.service", lambda i: [args.mmi.encode()]
    else:
        if not args.service:
            parser.error("--service is required (except with --mmi)")
        service = args.service
        if args.frames is not None:
            raw = [f.encode() for f in args.frames]
            frames_of = lambda i: raw  # noqa: E731
        else:
            if args.payload:
                try:
                    json.loads(args.payload)
                except ValueError as error:
                    parser.error("--payload is not JSON: %s" % error)
            extra = {}
            if args.meta:
                try:
                    extra = json.loads(args.meta)
                except ValueError as error:
                    parser.error("--meta is not JSON: %s" % error)
                if not isinstance(extra, dict):
                    parser.error("--meta must be a JSON object")
            run_id = "%d-%06x" % (os.getpid(), random.getrandbits(24))

            if args.form == "binary-meta" and extra:
                parser.error("--meta cannot be sent as binary meta (it holds only id, timeout and caller)")
            if args.form != "three" and len(args.method.encode()) > 255:
                parser.error("--method is over 255 bytes: it has no one-frame form")

            def frames_of(i):
                method, payload = args.method.encode(), args.payload.encode()
                if args.form == "binary-meta":
                    meta = binary_request_meta(i + 1, int(args.timeout * 1000), b"py-mdp-client")
                    return [one_frame_request(method, meta, payload)]
                meta = {"id": "py-%s-%d" % (run_id, i + 1), "timeout_ms": int(args.timeout * 1000)}
                meta.update(extra)
                meta = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
                if args.form == "one-frame":
                    return [one_frame_request(method, meta, payload)]
                return [method, meta, payload]
    if args.count < 1:
        parser.error("--count must be >= 1")
    if args.timeout <= 0:
        parser.error("--timeout must be > 0")

    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ if args.socket == "req" else zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, 1000)
    sock.setsockopt(zmq.RCVHWM, 1000)
    sock.setsockopt(zmq.MAXMSGSIZE, 1 << 20)
    sock.setsockopt(zmq.HEARTBEAT_IVL, 1000)
    sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3000)
    if credentials is not None:  # CURVE options are set before connecting
        sock.curve_publickey, sock.curve_secretkey, sock.curve_serverkey = credentials
    try:
        sock.connect(args.kernel)
        for i in range(args.count):
            request = [MDPC01, service.encode()] + frames_of(i)
            if args.socket == "dealer":
                request = [b""] + request
            started = time.monotonic()
            sock.send_multipart(request)
            if not sock.poll(int(args.timeout * 1000)):
                raise Failure("no reply from %s within %g s (request %d of %d)"
                              % (service, args.timeout, i + 1, args.count), 3)
            reply = sock.recv_multipart()
            elapsed = round((time.monotonic() - started) * 1000, 3)
            if args.socket == "dealer":
                if not reply or reply[0] != b"":
                    raise Failure("reply does not start with the empty delimiter frame")
                reply = reply[1:]
            if len(reply) < 2 or reply[0] != MDPC01:
                raise Failure("reply is not [MDPC01][service][body...]: %r" % [text(f)[:40] for f in reply[:3]])
            if reply[1] != service.encode():
                raise Failure("reply names service %r, asked %r" % (text(reply[1]), service))
            body = reply[2:]
            status, meta, payload, form = describe(body)
            emit({"service": text(reply[1]), "frames": [text(f) for f in body], "status": status,
                  "meta": meta, "payload": payload, "form": form, "elapsed_ms": elapsed})
        return 0
    finally:
        sock.close(0)
        ctx.term()


def run():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    # A parent that spawns from a thread with signals blocked (Foundation's Process does) hands
    # that mask down: unblock, or SIGTERM would stay pending.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    try:
        code = main()
    except Failure as failure:
        sys.stderr.write("error: %s\n" % failure)
        code = failure.code
    except zmq.ZMQError as error:
        sys.stderr.write("error: zmq: %s\n" % error)
        code = 1
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    run()
