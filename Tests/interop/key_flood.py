#!/usr/bin/env python3
"""Many CURVE handshakes with fresh unknown keys (a hostile client), to check that the kernel's
log stays bounded while it counts every refusal.

usage: key_flood.py --kernel tcp://127.0.0.1:PORT --server-key KERNEL.key --count N [--batch B]
Opens N DEALER sockets towards the request endpoint, each with a key pair made for it
(zmq.curve_keypair), B at a time, gives each batch a moment to handshake, closes it, and prints
{"attempted": N}.
"""
import os

import zmq
import zmq.auth

import buswire


def main():
    parser = buswire.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", default=os.environ.get("BUS_KERNEL", "tcp://127.0.0.1:5555"))
    parser.add_argument("--server-key", required=True, help="the kernel's public key file (kernel.key)")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--batch", type=int, default=50)
    args = parser.parse_args()
    requests, _, _ = buswire.endpoints(args.kernel)
    server, _ = zmq.auth.load_certificate(args.server_key)
    ctx = zmq.Context()
    done = 0
    while done < args.count:
        sockets = []
        for _ in range(min(args.batch, args.count - done)):
            public, secret = zmq.curve_keypair()
            sock = ctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.curve_publickey, sock.curve_secretkey, sock.curve_serverkey = public, secret, server
            sock.connect(requests)
            sockets.append(sock)
        poller = zmq.Poller()
        for sock in sockets:
            poller.register(sock, zmq.POLLIN)
        poller.poll(200)  # the handshakes run meanwhile on libzmq's I/O thread
        for sock in sockets:
            sock.close(0)
        done += len(sockets)
    ctx.term()
    buswire.emit({"attempted": done})
    return 0


if __name__ == "__main__":
    buswire.run_main(main)
