#!/usr/bin/env python3
"""A pyzmq peer for the security tests, using keys from pyzmq's own zmq.auth.

usage: secure_peer.py --kernel tcp://127.0.0.1:PORT --server-key KERNEL.key
                      (--cert NAME.key_secret | --new-key DIR | --null) ACTION ...
actions:
  call SERVICE METHOD [JSON]        one request (REQ); prints {"status", "payload"} or {"timeout": true}
  publish TOPIC COUNT               COUNT events (XPUB, waits for the kernel's subscription first)
  subscribe PREFIX SECONDS          prints every event as {"topic", "payload"} then {"received": n}
Every line is JSON on stdout, flushed; every wait is bounded.
"""
import argparse, json, os, struct, sys, time
import zmq, zmq.auth


def out(obj):
    print(json.dumps(obj), flush=True)


def meta(seq, source):
    s = source.encode()
    inst = (source + "-py").encode()
    ct = b"application/json"
    return struct.pack(">BBQQ", 1, 0, seq, int(time.time() * 1e6)) + bytes([len(s)]) + s + bytes([len(inst)]) + inst + bytes([len(ct)]) + ct + b"\x00\x00"


def main():
    # Foundation's Process hands its blocked-signal mask to children: unblock SIGTERM/SIGINT so
    # a test can stop this peer promptly.
    import signal
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    p = argparse.ArgumentParser()
    p.add_argument("--kernel", required=True)
    p.add_argument("--server-key", required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--cert")
    g.add_argument("--new-key", metavar="DIR", help="make a fresh key pair with zmq.auth.create_certificates in DIR")
    g.add_argument("--null", action="store_true")
    p.add_argument("--timeout", type=float, default=3.0)
    p.add_argument("action")
    p.add_argument("args", nargs="*")
    a = p.parse_args()

    host, port = a.kernel.rsplit(":", 1)
    port = int(port)
    ctx = zmq.Context()

    def secure(sock):
        if a.null:
            return
        if a.new_key:
            os.makedirs(a.new_key, exist_ok=True)
            pub_file, sec_file = zmq.auth.create_certificates(a.new_key, "stranger-%d" % os.getpid())
            pub, sec = zmq.auth.load_certificate(sec_file)
        else:
            pub, sec = zmq.auth.load_certificate(a.cert)
        server, _ = zmq.auth.load_certificate(a.server_key)
        sock.curve_publickey = pub
        sock.curve_secretkey = sec
        sock.curve_serverkey = server

    if a.action == "call":
        service, method = a.args[0], a.args[1]
        payload = a.args[2] if len(a.args) > 2 else "{}"
        s = ctx.socket(zmq.REQ)
        s.linger = 0
        s.rcvtimeo = int(a.timeout * 1000)
        secure(s)
        s.connect(a.kernel)
        s.send_multipart([b"MDPC01", service.encode(), method.encode(), json.dumps({"id": "py-1"}).encode(), payload.encode()])
        try:
            frames = s.recv_multipart()
            status = int(frames[2]) if len(frames) > 2 and frames[2].isdigit() else None
            body = json.loads(frames[4]) if len(frames) > 4 and frames[4] else None
            out({"status": status, "payload": body})
        except zmq.Again:
            out({"timeout": True})
    elif a.action == "publish":
        topic, count = a.args[0], int(a.args[1])
        s = ctx.socket(zmq.XPUB)
        s.linger = 500
        secure(s)
        s.connect(f"{host}:{port + 1}")
        poller = zmq.Poller()
        poller.register(s, zmq.POLLIN)
        if not poller.poll(int(a.timeout * 1000)):
            out({"subscribed": False})
            return
        s.recv()
        for i in range(count):
            s.send_multipart([topic.encode(), meta(i + 1, topic.split(".")[0]), json.dumps({"n": i}).encode()])
        out({"published": count})
        time.sleep(0.2)  # linger for the last frames; not a synchronisation point
    elif a.action == "subscribe":
        prefix, seconds = a.args[0], float(a.args[1])
        s = ctx.socket(zmq.SUB)
        s.linger = 0
        secure(s)
        s.connect(f"{host}:{port + 2}")
        s.setsockopt(zmq.SUBSCRIBE, prefix.encode())
        out({"connecting": True})
        end = time.time() + seconds
        received = 0
        while time.time() < end:
            if s.poll(50):
                frames = s.recv_multipart()
                received += 1
                out({"topic": frames[0].decode(), "payload": json.loads(frames[2]) if frames[2] else None})
        out({"received": received})
    else:
        print(f"unknown action {a.action}", file=sys.stderr)
        sys.exit(64)


if __name__ == "__main__":
    main()
