#!/usr/bin/env python3
"""Memory per sorted-set member and per hash field: latchd against redis-server.

Starts both servers (latchd: LATCHD env or build/test/server/latchd) on free loopback ports,
fills SETS sorted sets of MEMBERS members each (members "member:<n>", scores n / 7.0), then
hashes the same way, reading INFO memory's used_memory before and after. Pipelined, bounded:
about a million members at the defaults.

    python3 bench/zset_memory.py [--sets 100] [--members 10000] [--small-sets 20000]
"""
import argparse
import os
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buf = b""

    def send(self, cmds):
        out = []
        for args in cmds:
            out.append(b"*%d\r\n" % len(args))
            for a in args:
                a = a if isinstance(a, bytes) else str(a).encode()
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(1 << 16)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self.line()
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 16)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if line[:1] == b"-":
            raise RuntimeError(line)
        return line

    def call(self, *args):
        self.send([args])
        return self.reply()


def used_memory(c):
    info = c.call("INFO", "memory").decode()
    for line in info.splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise RuntimeError("no used_memory")


def fill(c, kind, sets, members, batch=1000):
    for s in range(sets):
        key = "%s:%d" % (kind, s)
        for start in range(0, members, batch):
            args = [("ZADD" if kind == "z" else "HSET"), key]
            for n in range(start, min(members, start + batch)):
                if kind == "z":
                    args += [repr(n / 7.0), "member:%d" % n]
                else:
                    args += ["member:%d" % n, repr(n / 7.0)]
            c.send([args])
        for start in range(0, members, batch):
            c.reply()


def measure(port, sets, members):
    c = Conn(port)
    results = {}
    for kind in ("z", "h"):
        c.call("FLUSHALL")
        time.sleep(0.2)
        before = used_memory(c)
        fill(c, kind, sets, members)
        time.sleep(0.2)
        after = used_memory(c)
        results[kind] = (after - before) / (sets * members)
    c.call("FLUSHALL")
    return results


def start(cmd, port):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            Conn(port).call("PING")
            return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError("server did not start: %s" % cmd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, default=100)
    ap.add_argument("--members", type=int, default=10000)
    ap.add_argument("--small-sets", type=int, default=20000)
    a = ap.parse_args()
    latchd = os.environ.get("LATCHD", "build/test/server/latchd")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        rp, lp = free_port(), free_port()
        redis = start(["redis-server", "--port", str(rp), "--save", "", "--appendonly", "no",
                       "--dir", d], rp)
        latch = start([latchd, "--port", str(lp)], lp)
        try:
            for name, port in (("redis-server", rp), ("latchd", lp)):
                big = measure(port, a.sets, a.members)
                small = measure(port, a.small_sets, 5)
                rows.append((name, big["z"], small["z"], big["h"], small["h"]))
        finally:
            redis.kill()
            latch.kill()
    print("bytes per member/field (used_memory delta / members)")
    print("%-13s %14s %14s %14s %14s" % ("server", "zset 10k", "zset 5", "hash 10k", "hash 5"))
    for r in rows:
        print("%-13s %14.1f %14.1f %14.1f %14.1f" % r)


if __name__ == "__main__":
    main()
