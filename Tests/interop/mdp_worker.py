#!/usr/bin/env python3
"""A Majordomo worker written from the 7/MDP text (MDPW01), pyzmq and the standard library only.

    mdp_worker.py --kernel tcp://127.0.0.1:PORT --service S [--mode echo|bus]
                  [--instance ID] [--delay-ms MS] [--heartbeat-ms 1000] [--liveness 3]
                  [--connect-timeout 10] [--drain-timeout 1.5] [--lifetime 600]
                  [--keys DIR [--identity NAME]]

7/MDP worker frames (DEALER, so the empty delimiter frame is explicit):
    READY      [""][MDPW01][0x01][service]( [metadata JSON] )   worker -> broker
    REQUEST    [""][MDPW01][0x02][client][""][body...]           broker -> worker
    REPLY      [""][MDPW01][0x03][client][""][body...]           worker -> broker
    HEARTBEAT  [""][MDPW01][0x04]                                either way
    DISCONNECT [""][MDPW01][0x05]                                either way
READY is sent once the TCP connection is up (ZMQ_IMMEDIATE: the socket is writable only
then). HEARTBEAT goes out every --heartbeat-ms; any message from the broker counts as a
heartbeat; after --liveness silent intervals, or on a DISCONNECT from the broker, the worker
opens a new socket and sends READY again. On SIGTERM/SIGINT (or --lifetime, or its parent
dying) it sends DISCONNECT, finishes the request in hand, and exits 0 once the broker's
DISCONNECT acknowledgement arrives or after --drain-timeout seconds.

Modes:
  echo  an unmodified MDP worker: the reply body is the request body, frames unchanged;
        READY carries no metadata frame unless --instance is given.
  bus   the bus body of docs/PROTOCOL.md: request [method][meta JSON][payload], reply
        [status][meta {"id": same id, "from": instance, "elapsed_us"}][payload]; methods
        echo (payload back), upper ({"text"} -> {"text": upper-cased}), sleep ({"ms"} ->
        {"slept_ms"} after that long); unknown method -> 404 no_such_method, payload that is
        not JSON -> 400 invalid_json, wrong fields -> 400 invalid_request, unreadable meta or
        no method -> 400 malformed. Errors carry {"code", "message"}. READY carries
        {"instance","version","host","pid"}.
--delay-ms delays every reply (the worker stays responsive meanwhile).

Security (a kernel started with --keys, docs/PROTOCOL.md "Security"): --keys DIR (default
$BUS_KEYS) and --identity NAME (default: the service name, which the built-in policy lets
serve its own service) set CURVE on every socket before it connects: the worker's key pair
from DIR/NAME.key_secret, the kernel's public key from DIR/kernel.key (both read with
zmq.auth.load_certificate). A key the kernel does not admit never completes the handshake
(exit 1 after --connect-timeout); an identity the policy does not let serve the service gets
DISCONNECT for its READY.

stdout, JSON lines (flushed):
    {"ready": true, "service": S, "instance": I|null, "reconnects": n}  each time READY is sent
    {"handled": n, "method": M|null, "status": int|null}               per request answered
    {"reconnecting": "reason"}                                          before a new READY
    {"disconnected": true, "acknowledged": bool, "handled": n}          at the end of a drain
Exit status: 0 after a drain, 1 failure (no connection within --connect-timeout), 2 bad arguments
(also unreadable key files).
"""
import argparse
import json
import os
import signal
import socket
import sys
import time

import zmq

MDPW01 = b"MDPW01"
READY, REQUEST, REPLY, HEARTBEAT, DISCONNECT = b"\x01", b"\x02", b"\x03", b"\x04", b"\x05"


class Failure(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("error: %s\n" % message)
        sys.exit(2)


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), sort_keys=True) + "\n")
    sys.stdout.flush()


def curve_credentials(keys, identity):
    """(public, secret, kernel public) for CURVE, from czmq/pyzmq certificate files."""
    import zmq.auth
    path = os.path.join(keys, identity + ".key_secret")
    try:
        public, secret = zmq.auth.load_certificate(path)
        kernel, _ = zmq.auth.load_certificate(os.path.join(keys, "kernel.key"))
    except (OSError, ValueError) as error:
        raise Usage("cannot load the CURVE keys of %r from %s: %s" % (identity, keys, error))
    if not secret:
        raise Usage("%s has no secret key" % path)
    return public, secret, kernel


class Usage(Exception):
    pass


def warn(text):
    sys.stderr.write("warning: %s\n" % text)
    sys.stderr.flush()


class Worker:
    def __init__(self, args):
        self.args = args
        self.interval = args.heartbeat_ms / 1000.0
        self.ctx = zmq.Context()
        self.sock = None
        self.ready_sent = False
        self.reconnects = 0
        self.last_heard = time.monotonic()
        self.next_heartbeat = time.monotonic()
        self.handled = 0
        self.pending = []  # [(due, reply frames, method, status)]
        self.draining = False
        self.acknowledged = False
        self.stop_requested = False
        self.instance = args.instance
        if args.mode == "bus" and not self.instance:
            self.instance = "py-%s-%s-%d" % (args.service, socket.gethostname().split(".")[0], os.getpid())
        self.credentials = args.credentials
        self.metadata = None
        if self.instance:
            self.metadata = json.dumps({"instance": self.instance, "version": "interop",
                                        "host": socket.gethostname(), "pid": os.getpid()},
                                       sort_keys=True, separators=(",", ":")).encode()

    # -- connection ---------------------------------------------------------------------------

    def open(self):
        if self.sock is not None:
            self.sock.close(0)
        sock = self.ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 500)
        sock.setsockopt(zmq.IMMEDIATE, 1)  # writable only once the connection is up
        sock.setsockopt(zmq.SNDHWM, 1000)
        sock.setsockopt(zmq.RCVHWM, 1000)
        sock.setsockopt(zmq.MAXMSGSIZE, 1 << 20)
        sock.setsockopt(zmq.HEARTBEAT_IVL, 1000)
        sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3000)
        sock.setsockopt(zmq.RECONNECT_IVL, 100)
        sock.setsockopt(zmq.RECONNECT_IVL_MAX, 2000)
        if self.credentials is not None:  # CURVE options are set before connecting
            sock.curve_publickey, sock.curve_secretkey, sock.curve_serverkey = self.credentials
        sock.connect(self.args.kernel)
        self.sock = sock
        self.ready_sent = False
        self.pending = []  # replies for the old connection's broker session are void

    def send(self, frames):
        try:
            self.sock.send_multipart(frames, zmq.NOBLOCK)
            return True
        except zmq.Again:
            return False

    def send_ready(self):
        frames = [b"", MDPW01, READY, self.args.service.encode()]
        if self.metadata is not None:
            frames.append(self.metadata)
        if self.send(frames):
            self.ready_sent = True
            now = time.monotonic()
            self.last_heard = now
            self.next_heartbeat = now + self.interval
            emit({"ready": True, "service": self.args.service, "instance": self.instance,
                  "reconnects": self.reconnects})

    def reconnect(self, reason):
        emit({"reconnecting": reason})
        self.reconnects += 1
        self.open()

    # -- requests -----------------------------------------------------------------------------

    def on_request(self, client, body):
        started = time.monotonic()
        if self.args.mode == "echo":
            reply_body, method, status, delay = body, None, None, 0.0
        else:
            reply_body, method, status, delay = self.answer_bus(body, started)
        due = started + delay + self.args.delay_ms / 1000.0
        self.pending.append((due, [b"", MDPW01, REPLY, client, b""] + reply_body, method, status))

    def answer_bus(self, body, started):
        def reply(status, meta_id, payload, delay=0.0):
            meta = {"from": self.instance}
            if meta_id is not None:
                meta["id"] = meta_id
            if status == 200:
                meta["elapsed_us"] = int((time.monotonic() - started + delay) * 1e6)
            return [str(status).encode(), json.dumps(meta, sort_keys=True, separators=(",", ":")).encode(), payload], status, delay

        def error(status, code, message, meta_id):
            payload = json.dumps({"code": code, "message": message}, sort_keys=True, separators=(",", ":")).encode()
            return reply(status, meta_id, payload)

        if not body or not body[0]:
            frames, status, delay = error(400, "malformed", "request body has no method frame", None)
            return frames, None, status, delay
        try:
            method = body[0].decode("utf-8")
        except UnicodeDecodeError:
            frames, status, delay = error(400, "malformed", "method name is not UTF-8", None)
            return frames, None, status, delay
        meta = {}
        if len(body) > 1 and body[1]:
            try:
                meta = json.loads(body[1])
            except ValueError:
                meta = None
            if not isinstance(meta, dict):
                frames, status, delay = error(400, "malformed", "request meta is not a JSON object", None)
                return frames, method, status, delay
        meta_id = meta.get("id")
        payload = body[2] if len(body) > 2 else b""

        def done(result):
            frames, status, delay = result
            return frames, method, status, delay

        if method not in ("echo", "upper", "sleep"):
            return done(error(404, "no_such_method", "service '%s' has no method '%s' (it has: echo, sleep, upper)"
                              % (self.args.service, method), meta_id))
        value = None
        if payload:
            try:
                value = json.loads(payload)
            except ValueError:
                return done(error(400, "invalid_json", "the payload of '%s' is not valid JSON" % method, meta_id))
        if method == "echo":
            return done(reply(200, meta_id, payload))
        if method == "upper":
            if not isinstance(value, dict) or not isinstance(value.get("text"), str):
                return done(error(400, "invalid_request", "the payload of 'upper' must be {\"text\": string}", meta_id))
            return done(reply(200, meta_id, json.dumps({"text": value["text"].upper()}, separators=(",", ":")).encode()))
        ms = value.get("ms") if isinstance(value, dict) else None
        if not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms < 0:
            return done(error(400, "invalid_request", "the payload of 'sleep' must be {\"ms\": number >= 0}", meta_id))
        return done(reply(200, meta_id, json.dumps({"slept_ms": ms}, separators=(",", ":")).encode(), delay=ms / 1000.0))

    def flush_replies(self, now):
        due = [p for p in self.pending if p[0] <= now]
        self.pending = [p for p in self.pending if p[0] > now]
        for _, frames, method, status in due:
            if not self.send(frames):  # no connection: the broker that asked is gone
                warn("dropped a reply: no connection to the broker")
                continue
            self.handled += 1
            emit({"handled": self.handled, "method": method, "status": status})

    # -- broker messages ----------------------------------------------------------------------

    def on_message(self, frames):
        self.last_heard = time.monotonic()
        if len(frames) < 3 or frames[0] != b"" or frames[1] != MDPW01:
            warn("dropped a message that is not [\"\"][MDPW01][command]...")
            return
        command = frames[2]
        if command == REQUEST:
            if len(frames) < 5 or frames[4] != b"":
                warn("dropped a REQUEST without [client][\"\"]")
                return
            self.on_request(frames[3], frames[5:])
        elif command == HEARTBEAT:
            pass
        elif command == DISCONNECT:
            if self.draining:
                self.acknowledged = True
            else:
                self.reconnect("broker sent DISCONNECT")
        else:
            warn("dropped an unexpected command 0x%s" % command.hex())

    # -- main loop ----------------------------------------------------------------------------

    def run(self):
        args = self.args
        ppid = os.getppid()
        started = time.monotonic()
        connect_deadline = started + args.connect_timeout
        lifetime_end = started + args.lifetime
        drain_end = None
        self.open()
        try:
            while True:
                now = time.monotonic()
                if not self.draining and (self.stop_requested or now >= lifetime_end
                                          or (ppid != 1 and os.getppid() != ppid)):
                    self.draining = True
                    drain_end = now + args.drain_timeout
                    if self.ready_sent:
                        self.send([b"", MDPW01, DISCONNECT])
                    else:
                        self.acknowledged = True  # never registered: nothing to leave
                if self.draining and ((self.acknowledged and not self.pending) or now >= drain_end):
                    emit({"disconnected": True, "acknowledged": self.acknowledged, "handled": self.handled})
                    return 0
                if not self.ready_sent:
                    if self.draining:
                        pass
                    elif self.sock.poll(0, zmq.POLLOUT):
                        self.send_ready()
                    elif self.reconnects == 0 and now >= connect_deadline:
                        raise Failure("no connection to %s within %g s" % (args.kernel, args.connect_timeout))
                else:
                    if not self.draining and now - self.last_heard > self.interval * args.liveness:
                        self.reconnect("broker silent for %d heartbeat intervals" % args.liveness)
                        continue
                    if now >= self.next_heartbeat and not self.acknowledged:
                        # also while draining: the broker expires a silent worker, in-flight or not
                        self.send([b"", MDPW01, HEARTBEAT])
                        self.next_heartbeat = now + self.interval
                self.flush_replies(now)
                wait = 0.1 if self.ready_sent else 0.02
                if self.pending:
                    wait = min(wait, max(0.0, min(p[0] for p in self.pending) - time.monotonic()))
                if self.sock.poll(int(wait * 1000) + 1, zmq.POLLIN):
                    while self.sock.poll(0, zmq.POLLIN):
                        self.on_message(self.sock.recv_multipart())
        finally:
            if self.sock is not None:
                self.sock.close(200)
            self.ctx.term()


def main():
    parser = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", default=os.environ.get("BUS_KERNEL", "tcp://127.0.0.1:5555"))
    parser.add_argument("--service", required=True)
    parser.add_argument("--mode", choices=["echo", "bus"], default="bus")
    parser.add_argument("--instance", default=None, help="instance id for the READY metadata frame")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="delay every reply by this much")
    parser.add_argument("--heartbeat-ms", type=float, default=1000.0)
    parser.add_argument("--liveness", type=int, default=3)
    parser.add_argument("--connect-timeout", type=float, default=10.0)
    parser.add_argument("--drain-timeout", type=float, default=1.5)
    parser.add_argument("--lifetime", type=float, default=600.0, help="leave the bus after this many seconds")
    parser.add_argument("--keys", default=os.environ.get("BUS_KEYS") or None,
                        help="CURVE: folder with NAME.key_secret and kernel.key (default $BUS_KEYS)")
    parser.add_argument("--identity", help="CURVE: the identity whose key pair to use (default: the service name)")
    args = parser.parse_args()
    if not args.service or args.service.startswith("mmi.") or args.service == "bus":
        parser.error("--service must be a non-reserved service name")
    if args.heartbeat_ms < 10 or args.liveness < 1:
        parser.error("--heartbeat-ms must be >= 10 and --liveness >= 1")

    args.credentials = None
    if args.keys:
        try:
            args.credentials = curve_credentials(args.keys, args.identity or args.service)
        except Usage as error:
            parser.error(str(error))

    worker = Worker(args)

    def on_signal(signum, frame):
        worker.stop_requested = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # A parent that spawns from a thread with signals blocked (Foundation's Process does) hands
    # that mask down: unblock, or SIGTERM would stay pending and the worker would never drain.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    try:
        return worker.run()
    except Failure as failure:
        sys.stderr.write("error: %s\n" % failure)
        return 1
    except zmq.ZMQError as error:
        sys.stderr.write("error: zmq: %s\n" % error)
        return 1


if __name__ == "__main__":
    sys.exit(main())
