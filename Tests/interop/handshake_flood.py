#!/usr/bin/env python3
"""Hostile connections against a CURVE kernel while a real client keeps calling: some send
garbage bytes and reconnect, some stall half-way through the ZMTP greeting, some complete a
CURVE handshake with a fresh unknown key, again and again.

usage: handshake_flood.py --kernel tcp://127.0.0.1:PORT --server-key KERNEL.key
                          [--connections N] [--seconds S]
Keeps N connections (a third of each kind) open towards the request endpoint for S seconds
(or until SIGTERM), prints {"ready": N} once all are open, then {"garbage": G, "stalled": T,
"unknown_keys": K} with how many of each it opened in all.
"""
import os
import random
import socket
import time

import zmq
import zmq.auth

import buswire

# ZMTP 3 greeting up to the version bytes (signature, version major): a peer that stops here
# holds the kernel's handshake open until its handshake timeout.
PARTIAL_GREETING = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03"


def host_port(endpoint):
    rest = endpoint.split("://", 1)[1]
    host, port = rest.rsplit(":", 1)
    return host, int(port)


def raw_connection(address, payload):
    """A TCP connection that sent `payload`, or None when the connect failed (refused, timed
    out, out of descriptors under load): the slot is tried again on the next turn."""
    try:
        sock = socket.create_connection(address, timeout=2)
    except OSError:
        return None
    sock.setblocking(False)
    try:
        sock.send(payload)
    except OSError:
        pass
    return sock


def close_raw(sock):
    if sock is not None:
        sock.close()


def main():
    parser = buswire.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", default=os.environ.get("BUS_KERNEL", "tcp://127.0.0.1:5555"))
    parser.add_argument("--server-key", required=True, help="the kernel's public key file (kernel.key)")
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    requests, _, _ = buswire.endpoints(args.kernel)
    address = host_port(requests)
    server, _ = zmq.auth.load_certificate(args.server_key)
    ctx = zmq.Context()
    per_kind = max(1, args.connections // 3)
    counts = {"garbage": 0, "stalled": 0, "unknown_keys": 0}

    def open_garbage():
        counts["garbage"] += 1
        return raw_connection(address, bytes(random.getrandbits(8) for _ in range(256)))

    def open_stalled():
        counts["stalled"] += 1
        return raw_connection(address, PARTIAL_GREETING)

    def open_unknown_key():
        counts["unknown_keys"] += 1
        public, secret = zmq.curve_keypair()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.curve_publickey, sock.curve_secretkey, sock.curve_serverkey = public, secret, server
        sock.connect(requests)
        # A request it hopes to send: queued until a handshake that never succeeds.
        sock.send_multipart([b"", b"MDPC01", b"bus", b"{}"], zmq.NOBLOCK)
        return sock

    garbage = [open_garbage() for _ in range(per_kind)]
    stalled = [open_stalled() for _ in range(per_kind)]
    unknown = [open_unknown_key() for _ in range(args.connections - 2 * per_kind)]
    buswire.emit({"ready": len(garbage) + len(stalled) + len(unknown)})

    deadline = buswire.Deadline(args.seconds)
    parent = os.getppid()
    turn = 0
    try:
        while not deadline.expired() and not buswire.orphaned(parent):
            # Recycle a few of each kind every 50 ms: the kernel keeps meeting new hostile peers.
            for _ in range(3):
                i = turn % len(garbage)
                close_raw(garbage[i])
                garbage[i] = open_garbage()
                j = turn % len(unknown)
                unknown[j].close(0)
                unknown[j] = open_unknown_key()
                turn += 1
            # A stalled peer the kernel dropped (handshake timeout) is replaced.
            for k, sock in enumerate(stalled):
                if sock is None:
                    stalled[k] = open_stalled()
                    continue
                try:
                    if sock.recv(4096) == b"":
                        sock.close()
                        stalled[k] = open_stalled()
                except BlockingIOError:
                    pass
                except OSError:
                    sock.close()
                    stalled[k] = open_stalled()
            time.sleep(0.05)
    except buswire.Terminated:
        pass

    for sock in garbage + stalled:
        close_raw(sock)
    for sock in unknown:
        sock.close(0)
    ctx.term()
    buswire.emit(counts)
    return 0


if __name__ == "__main__":
    buswire.run_main(main)
