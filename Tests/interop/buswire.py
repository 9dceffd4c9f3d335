"""Shared helpers for the event-plane interop programs (bus_pub.py, bus_sub.py), written from
docs/PROTOCOL.md with pyzmq and the standard library only. Not a client library: just the wire
format (event meta, topics, patterns), socket options, JSON-lines output and the probe that
proves an event path through the kernel is live.

The MDP programs (mdp_client.py, mdp_worker.py) deliberately do not import this module: they
are written from the 7/MDP text alone.
"""

import argparse
import json
import os
import random
import signal
import socket
import struct
import sys
import time

import zmq

META_VERSION = 1
FLAG_RETAINED = 1 << 0
FLAG_REPLAYED = 1 << 1
FLAG_RESET = 1 << 2
FLAG_SNAPSHOT = 1 << 3
FLAG_REPEATED = 1 << 5  # kernel only: a stream's newest event re-sent after a drop
META_FIXED = struct.Struct(">BBQQ")  # version, flags, seq, time_us: 18 bytes
PROBE_PREFIX = "interop.probe."
# With security the probes use the kernel's own probe namespace: the kernel lets every admitted
# identity publish on bus.probe.* (an identity may otherwise publish only under its own name).
SECURE_PROBE_PREFIX = "bus.probe.interop-"
# Probe topics of other bus clients (the Swift BusSubscription.confirm() uses bus.probe.*).
PROBE_PREFIXES = (PROBE_PREFIX, "bus.probe.")
MAX_TOPIC = 255
MAX_MESSAGE = 1 << 20

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_TIMEOUT = 0, 1, 2, 3


# -- process plumbing ---------------------------------------------------------------------------

class Failure(Exception):
    """A failure reported as one line on stderr and a non-zero exit status."""

    def __init__(self, message, code=EXIT_FAIL):
        super().__init__(message)
        self.code = code


class ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error and exit status 2."""

    def error(self, message):
        sys.stderr.write("error: %s\n" % message)
        sys.exit(EXIT_USAGE)


def emit(obj):
    """One JSON line on stdout, flushed at once."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), sort_keys=True) + "\n")
    sys.stdout.flush()


def run_main(main):
    """Runs main(), turning Failure/KeyboardInterrupt/SIGTERM into one stderr line and a status."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    # A parent that spawns from a thread with signals blocked (Foundation's Process does) hands
    # that mask down: unblock, or SIGTERM would stay pending.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    try:
        code = main()
    except Failure as failure:
        sys.stderr.write("error: %s\n" % failure)
        sys.stderr.flush()
        code = failure.code
    except (KeyboardInterrupt, Terminated):
        code = 128 + signal.SIGTERM
    except zmq.ZMQError as error:
        sys.stderr.write("error: zmq: %s\n" % error)
        code = EXIT_FAIL
    sys.exit(code or 0)


class Terminated(Exception):
    pass


def _on_sigterm(signum, frame):
    raise Terminated()


class Deadline:
    """A monotonic deadline; remaining_ms() is what zmq.Poller.poll takes."""

    def __init__(self, seconds):
        self.at = time.monotonic() + seconds

    def remaining(self):
        return max(0.0, self.at - time.monotonic())

    def remaining_ms(self, cap_ms=None):
        ms = int(self.remaining() * 1000)
        return ms if cap_ms is None else min(ms, cap_ms)

    def expired(self):
        return time.monotonic() >= self.at


def orphaned(initial_ppid):
    """True when the process that started us is gone (never outlive a crashed test runner)."""
    return initial_ppid != 1 and os.getppid() != initial_ppid


# -- endpoints and sockets ------------------------------------------------------------------------

def endpoints(kernel):
    """(requests, events-in, events-out) for tcp://HOST:PORT: PORT, PORT+1, PORT+2."""
    if not kernel.startswith("tcp://") or ":" not in kernel[6:]:
        raise Failure("--kernel must be tcp://HOST:PORT, got %r" % kernel, EXIT_USAGE)
    host, _, port = kernel.rpartition(":")
    try:
        port = int(port)
    except ValueError:
        raise Failure("--kernel must be tcp://HOST:PORT, got %r" % kernel, EXIT_USAGE)
    if not 1 <= port <= 65533:
        raise Failure("--kernel port must be 1..65533, got %d" % port, EXIT_USAGE)
    return kernel, "%s:%d" % (host, port + 1), "%s:%d" % (host, port + 2)


def add_security_arguments(parser, identity_help):
    """--keys DIR (default $BUS_KEYS) and --identity NAME, as the project's own processes take."""
    parser.add_argument("--keys", default=os.environ.get("BUS_KEYS") or None,
                        help="CURVE: folder with NAME.key_secret and kernel.key (default $BUS_KEYS)")
    parser.add_argument("--identity", help=identity_help)


def load_credentials(keys, identity):
    """(public, secret, kernel public) for CURVE from czmq/pyzmq certificate files, or None
    without keys: DIR/IDENTITY.key_secret (the key pair) and DIR/kernel.key (the kernel's public
    key), read with zmq.auth.load_certificate. Unusable files are a usage error."""
    if not keys:
        return None
    if not identity:
        raise Failure("--keys (or $BUS_KEYS) needs --identity NAME", EXIT_USAGE)
    import zmq.auth
    path = os.path.join(keys, identity + ".key_secret")
    try:
        public, secret = zmq.auth.load_certificate(path)
        kernel, _ = zmq.auth.load_certificate(os.path.join(keys, "kernel.key"))
    except (OSError, ValueError) as error:
        raise Failure("cannot load the CURVE keys of %r from %s: %s" % (identity, keys, error), EXIT_USAGE)
    if not secret:
        raise Failure("%s has no secret key" % path, EXIT_USAGE)
    return public, secret, kernel


def tune(sock, hwm=10000, linger_ms=200, credentials=None):
    """The options PROTOCOL.md recommends for every socket towards the kernel, and CURVE
    (credentials from load_credentials) when the kernel runs with security. Call it before
    connecting: CURVE options apply to connections made afterwards."""
    sock.setsockopt(zmq.LINGER, linger_ms)
    sock.setsockopt(zmq.SNDHWM, hwm)
    sock.setsockopt(zmq.RCVHWM, hwm)
    sock.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
    sock.setsockopt(zmq.HEARTBEAT_IVL, 1000)
    sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3000)
    sock.setsockopt(zmq.HEARTBEAT_TTL, 3000)
    sock.setsockopt(zmq.RECONNECT_IVL, 1000)
    sock.setsockopt(zmq.RECONNECT_IVL_MAX, 5000)
    if credentials is not None:
        sock.curve_publickey, sock.curve_secretkey, sock.curve_serverkey = credentials
    return sock


def default_instance(source):
    host = socket.gethostname().split(".")[0] or "host"
    return "%s-%s-%d-%s" % (source, host, os.getpid(), "%06x" % random.getrandbits(24))


# -- topics and patterns --------------------------------------------------------------------------

def _valid_token(token):
    return token != "" and all(c in "abcdefghijklmnopqrstuvwxyz0123456789_-" for c in token)


def validate_topic(topic):
    """Raises Failure(usage) unless topic is lowercase dotted [a-z0-9_-] tokens, <= 255 bytes."""
    if not topic:
        raise Failure("topic is empty", EXIT_USAGE)
    if len(topic.encode()) > MAX_TOPIC:
        raise Failure("topic %r is longer than %d bytes" % (topic, MAX_TOPIC), EXIT_USAGE)
    if not all(_valid_token(t) for t in topic.split(".")):
        raise Failure("topic %r: tokens are non-empty and use only a-z, 0-9, '_' and '-'" % topic, EXIT_USAGE)


class Pattern:
    """NATS-style pattern: '*' one token, '>' (last) one or more tokens, '>' alone everything."""

    def __init__(self, text):
        if text in (">", ""):
            self.text, self.tokens = ">", [">"]
            return
        tokens = text.split(".")
        for i, token in enumerate(tokens):
            if token == ">" and i != len(tokens) - 1:
                raise Failure("pattern %r: '>' must be the last token" % text, EXIT_USAGE)
            if token not in ("*", ">") and not _valid_token(token):
                raise Failure("pattern %r: tokens use only a-z, 0-9, '_' and '-'" % text, EXIT_USAGE)
        self.text, self.tokens = text, tokens

    @property
    def wire_prefix(self):
        """The bytes to ZMQ_SUBSCRIBE: literal tokens before the first wildcard, each with its dot."""
        if "*" not in self.tokens and ">" not in self.tokens:
            return self.text.encode()
        prefix = b""
        for token in self.tokens:
            if token in ("*", ">"):
                break
            prefix += token.encode() + b"."
        return prefix

    def matches(self, topic):
        parts = topic.split(".")
        for i, part in enumerate(parts):
            if i >= len(self.tokens):
                return False
            token = self.tokens[i]
            if token == ">":
                return True
            if token != "*" and token != part:
                return False
        return len(parts) == len(self.tokens)


def probe_topic(secure=False):
    return (SECURE_PROBE_PREFIX if secure else PROBE_PREFIX) + "%016x" % random.getrandbits(64)


# -- event meta -----------------------------------------------------------------------------------

def _short(text):
    data = text.encode()[:255]
    return bytes([len(data)]) + data


def encode_meta(flags, seq, source, instance, time_us=None, content_type="application/json",
                correlation_id="", causation_id=""):
    if time_us is None:
        time_us = time.time_ns() // 1000
    return (META_FIXED.pack(META_VERSION, flags, seq, time_us) + _short(source) + _short(instance)
            + _short(content_type) + _short(correlation_id) + _short(causation_id))


def decode_meta(meta):
    """The meta frame as a dict; raises ValueError naming what is wrong."""
    if len(meta) < META_FIXED.size:
        raise ValueError("meta is %d bytes, shorter than the 18-byte header" % len(meta))
    version, flags, seq, time_us = META_FIXED.unpack_from(meta)
    if version != META_VERSION:
        raise ValueError("meta version %d is not supported" % version)
    offset, strings = META_FIXED.size, []
    for name in ("source", "instance", "content_type", "correlation_id", "causation_id"):
        if offset >= len(meta) or offset + 1 + meta[offset] > len(meta):
            raise ValueError("meta is truncated in its %s field" % name)
        n = meta[offset]
        strings.append(meta[offset + 1:offset + 1 + n].decode("utf-8", "replace"))
        offset += 1 + n
    source, instance, content_type, correlation_id, causation_id = strings
    return {"version": version, "flags": flags, "seq": seq, "time_us": time_us, "source": source,
            "instance": instance, "content_type": content_type, "correlation_id": correlation_id,
            "causation_id": causation_id}


# -- a tiny MDP client for the kernel service `bus` -----------------------------------------------

def kernel_call(ctx, requests, method, params, timeout_s, credentials=None):
    """Calls bus.<method> on a fresh DEALER; returns (status, payload-object-or-None)."""
    sock = tune(ctx.socket(zmq.DEALER), linger_ms=0, credentials=credentials)
    try:
        sock.connect(requests)
        meta = {"id": "interop-%d-%d" % (os.getpid(), random.getrandbits(32)),
                "timeout_ms": int(timeout_s * 1000), "caller": "interop"}
        sock.send_multipart([b"", b"MDPC01", b"bus", method.encode(), json.dumps(meta).encode(),
                             json.dumps(params).encode()])
        if not sock.poll(int(timeout_s * 1000)):
            raise Failure("no reply from bus.%s within %.1f s (is the kernel at %s up?)"
                          % (method, timeout_s, requests), EXIT_TIMEOUT)
        frames = sock.recv_multipart()
    finally:
        sock.close(0)
    if len(frames) < 4 or frames[0] != b"" or frames[1] != b"MDPC01":
        raise Failure("bus.%s: reply is not [\"\"][MDPC01][service][body...]" % method)
    status = int(frames[3])
    payload = json.loads(frames[5]) if len(frames) > 5 and frames[5] else None
    return status, payload


# -- waiting for the kernel's subscription ------------------------------------------------------

def wait_kernel_subscription(xpub, deadline):
    """Publishing through an XPUB: returns once the kernel's XSUB subscription (a message starting
    with 0x01) has arrived, i.e. once events sent on this socket reach the kernel."""
    while True:
        if xpub.poll(deadline.remaining_ms(cap_ms=100)):
            frames = xpub.recv_multipart()
            if frames and frames[0][:1] == b"\x01":
                return
        elif deadline.expired():
            raise Failure("the kernel's events-in endpoint did not subscribe within the timeout "
                          "(is the kernel up at PORT+1?)", EXIT_TIMEOUT)


# -- the probe: proof that an event path through the kernel is live -------------------------------

def probe(pub, sub, topic, source, instance, deadline, interval_s=0.05, on_other=None):
    """Publishes probe events on `topic` through `pub` until one comes back on `sub` (already
    subscribed to `topic` and connected). Returns the number of probes sent. Frames on `sub`
    that are not the probe are handed to on_other(frames) so nothing received is lost.
    Raises Failure(timeout) at the deadline."""
    sent, seq = 0, 0
    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)
    next_send = 0.0
    while True:
        now = time.monotonic()
        if now >= next_send:
            seq += 1
            pub.send_multipart([topic.encode(), encode_meta(0, seq, source, instance),
                                json.dumps({"probe": seq}).encode()])
            sent += 1
            next_send = now + interval_s
        if deadline.expired():
            raise Failure("no probe came back through the kernel within the timeout "
                          "(is the kernel up and its event ports PORT+1/PORT+2 reachable?)", EXIT_TIMEOUT)
        wait = max(1, min(deadline.remaining_ms(), int((next_send - time.monotonic()) * 1000) + 1))
        if dict(poller.poll(wait)).get(sub):
            while sub.poll(0):
                frames = sub.recv_multipart()
                if frames and frames[0] == topic.encode():
                    return sent
                if on_other is not None:
                    on_other(frames)
