#!/usr/bin/env python3
"""A full SCAN (cursor 0 back to 0) over N keys: end-to-end time, latchd vs redis-server.

For each server: start it on a free port, set keys k0..k{N-1} (pipelined SETs), then time a
whole SCAN with COUNT c, one call after another on one connection, and the server's CPU time
(utime+stime from /proc) over the same window, and how many keys never came back (must be 0;
issue 24: before, each SCAN call copied and sorted a whole shard, so a full scan was
quadratic in the keys, and a call that filled its COUNT in the last shard ended the scan).

    python3 bench/scan_full.py --latchd build/rel/server/latchd [--keys 200000] [--count 10]
        [--rounds 1] [--only latch,redis]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from del_many import fill  # noqa: E402
from run import Resp, Server, proc_cpu_seconds  # noqa: E402


def full_scan(port, count):
    """SCAN from cursor 0 until it returns 0; returns (keys seen, calls, seconds)."""
    conn = Resp(port, timeout=600)
    seen, calls, cursor = set(), 0, "0"
    start = time.monotonic()
    while True:
        cursor, keys = conn.call("SCAN", cursor, "COUNT", count)
        seen.update(keys)
        calls += 1
        if cursor == "0":
            break
    elapsed = time.monotonic() - start
    conn.close()
    return seen, calls, elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--latchd", required=True)
    ap.add_argument("--keys", type=int, default=200000)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default="latch,redis")
    args = ap.parse_args()
    args.latchd = os.path.abspath(args.latchd)  # the servers run in /tmp
    argvs = {
        "latch": lambda p: [args.latchd, "--port", str(p), "--bind", "127.0.0.1",
                            "--io-threads", "2"],
        "redis": lambda p: ["redis-server", "--port", str(p), "--bind", "127.0.0.1", "--save", "",
                            "--appendonly", "no"],
    }
    print("full SCAN COUNT %d over %d keys" % (args.count, args.keys))
    print("| server | round | calls | keys returned | keys missed | end to end s | server CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in range(args.rounds):
        for name in args.only.split(","):
            srv = Server(name, argvs[name], "/tmp")
            srv.start()
            try:
                fill(srv.port, args.keys)
                cpu0 = proc_cpu_seconds(srv.proc.pid)
                seen, calls, secs = full_scan(srv.port, args.count)
                cpu = proc_cpu_seconds(srv.proc.pid) - cpu0
                missing = args.keys - len(seen & {"k%d" % i for i in range(args.keys)})
                print("| %s | %d | %d | %d | %d | %.3f | %.3f |" % (
                    name, r + 1, calls, len(seen), missing, secs, cpu), flush=True)
            finally:
                srv.stop()


if __name__ == "__main__":
    main()
