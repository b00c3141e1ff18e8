#!/usr/bin/env python3
"""Loading a journal of 1,000,000 locks: latchd against redis-server, and bytes per lock.

    python3 bench/journal_load.py [--locks 1000000] [--rounds 3] [--no-build]

Each server is started with appendonly yes (Redis: aof-use-rdb-preamble no, so its journal is
RESP as latchd's) in a fresh directory under bench/results/ (the work tree's filesystem, not
tmpfs), filled with the same locks (SET lock:<i> <22 B token> NX PX 3600000, pipelined; Redis
and latchd both journal them as SET ... PXAT <absolute ms>), and stopped. Reported per server:
the journal's bytes on disk per lock, then, over interleaved restarts, the time from spawn to
INFO's loading:0 (the first moment it serves the keyspace) and the load time the server logs
itself. With --lock-acquire, latchd is also measured with LOCK.ACQUIRE locks (owner + fencing
token in each record). The load average is printed next to each figure. Standard library only;
every wait is bounded.
"""

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import run as R
from benchkit.procs import free_port, proc_cpu_seconds
from benchkit.report import loadavg

LOG_SECONDS = {
    "latch": re.compile(r"DB loaded from append only file: ([0-9.]+) seconds"),
    "redis": re.compile(r"DB loaded from append only file: ([0-9.]+) seconds"),
}


def argv_for(kind, args, port, d):
    # No automatic rewrite: the journal is first measured as written, then after BGREWRITEAOF.
    common = ["--port", str(port), "--bind", "127.0.0.1", "--dir", d, "--appendonly", "yes",
              "--appendfsync", "everysec", "--auto-aof-rewrite-percentage", "0"]
    if kind.startswith("latch"):
        return [args.latchd] + common
    return ["redis-server"] + common + ["--save", "", "--aof-use-rdb-preamble", "no"]


def spawn(argv, log_path):
    log = open(log_path, "ab")
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd="/tmp"), log


def info_loading_done(port):
    """True once INFO persistence says loading:0; False while loading or not yet listening."""
    try:
        c = R.Resp(port, timeout=5)
    except OSError:
        return False
    try:
        info = c.call("INFO", "persistence")
        return isinstance(info, str) and "\r\nloading:0\r\n" in ("\r\n" + info)
    except (OSError, ConnectionError):
        return False
    finally:
        c.close()


def stop(proc, log):
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    log.close()


def journal_bytes(d):
    """Bytes of the journal's files (not the manifest), and their names with sizes."""
    files = {}
    for root, _, names in os.walk(os.path.join(d, "appendonlydir")):
        for f in names:
            if not f.endswith(".manifest"):
                files[f] = os.path.getsize(os.path.join(root, f))
    return sum(files.values()), files


def start_ready(args, kind, d, log_path, timeout=120):
    port = free_port()
    proc, log = spawn(argv_for(kind, args, port, d), log_path)
    deadline = time.monotonic() + timeout
    while not info_loading_done(port):
        if time.monotonic() > deadline or proc.poll() is not None:
            stop(proc, log)
            raise RuntimeError("%s did not start (see %s)" % (kind, log_path))
        time.sleep(0.05)
    return port, proc, log


def rewrite(args, kind, d, log_path):
    """BGREWRITEAOF and wait for it (bounded): the journal compacted into a base file."""
    port, proc, log = start_ready(args, kind, d, log_path)
    try:
        c = R.Resp(port)
        c.call("BGREWRITEAOF")
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            info = R.info_fields(c, "persistence")
            if (info.get("aof_rewrite_in_progress") == "0"
                    and info.get("aof_rewrite_scheduled", "0") == "0"
                    and info.get("aof_rewrites", "1") != "0"):
                break
            time.sleep(0.2)
        c.close()
    finally:
        stop(proc, log)
    return journal_bytes(d)


def fill(args, kind, d, log_path):
    port, proc, log = start_ready(args, kind, d, log_path)
    try:
        srv = type("S", (), {"port": port, "name": kind})()
        if kind == "latch-lock":
            template = "LOCK.ACQUIRE lock:{i} %s 3600000" % R.TOKEN
        else:
            template = "SET lock:{i} %s NX PX 3600000" % R.TOKEN
        R.prefill(args, srv, template, args.locks)
        c = R.Resp(port)
        n = c.call("DBSIZE")
        c.close()
        if n != args.locks:
            raise RuntimeError("%s holds %s keys after the fill, not %d" % (kind, n, args.locks))
    finally:
        stop(proc, log)
    return journal_bytes(d)


def time_load(args, kind, d, log_path):
    with open(log_path, "ab") as f:
        f.write(b"\n--- load round ---\n")
    before = os.path.getsize(log_path)
    port = free_port()
    load = loadavg()[0]
    t0 = time.monotonic()
    proc, log = spawn(argv_for(kind, args, port, d), log_path)
    try:
        deadline = t0 + 120
        while not info_loading_done(port):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("%s did not load (see %s)" % (kind, log_path))
            time.sleep(0.002)
        took = time.monotonic() - t0
        cpu = proc_cpu_seconds(proc.pid)  # the load's own CPU time, whatever the machine's load
        c = R.Resp(port)
        n = c.call("DBSIZE")
        c.close()
    finally:
        stop(proc, log)
    with open(log_path, "rb") as f:
        f.seek(before)
        m = LOG_SECONDS["latch" if kind.startswith("latch") else "redis"].search(
            f.read().decode(errors="replace"))
    if n != args.locks:
        raise RuntimeError("%s loaded %s keys, not %d" % (kind, n, args.locks))
    return {"ready_s": took, "cpu_s": cpu, "logged_s": float(m.group(1)) if m else None,
            "load": load}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--locks", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lock-acquire", action="store_true",
                    help="also latchd with LOCK.ACQUIRE locks (owner and fencing token)")
    ap.add_argument("--build-dir", default=os.path.join(R.ROOT, "build-bench-release"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the journals (to profile a load)")
    args = ap.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    R.build(args)
    args.latchd = os.path.join(args.build_dir, "server", "latchd")
    args.loadgen = os.path.join(args.build_dir, "bench", "latch_loadgen")
    for path in (args.latchd, args.loadgen):
        if not os.access(path, os.X_OK):
            sys.exit("missing %s (build it, or drop --no-build)" % path)
    kinds = ["latch", "redis"] + (["latch-lock"] if args.lock_acquire else [])
    log_dir = os.path.join(R.RESULTS, "logs")
    os.makedirs(log_dir, exist_ok=True)
    dirs = {k: tempfile.mkdtemp(prefix="tmp-load-%s-" % k, dir=R.RESULTS) for k in kinds}
    logs = {k: os.path.join(log_dir, "load-%s.log" % k) for k in kinds}
    for p in logs.values():
        open(p, "w").close()
    try:
        size = {}
        for k in kinds:
            size[k], files = fill(args, k, dirs[k], logs[k])
            print("%s: %d bytes of journal, %.1f bytes per lock (load %.2f): %s" % (
                k, size[k], size[k] / args.locks, loadavg()[0], files), flush=True)
        rows = [("as written", size, load_rounds(args, kinds, dirs, logs))]
        after = {}
        for k in kinds:
            after[k], files = rewrite(args, k, dirs[k], logs[k])
            print("%s after BGREWRITEAOF: %.1f bytes per lock: %s" % (
                k, after[k] / args.locks, files), flush=True)
        rows.append(("after BGREWRITEAOF", after, load_rounds(args, kinds, dirs, logs)))
    finally:
        for d in dirs.values():
            if args.keep:
                print("kept", d)
            else:
                shutil.rmtree(d, ignore_errors=True)
    print()
    print("| journal | server | journal bytes/lock | ready (median s) | CPU to ready (median s) "
          "| logged load (median s) | load avg (per round) |")
    print("|---|---|---|---|---|---|---|")
    for shape, sizes, runs in rows:
        for k in kinds:
            rs = runs[k]
            logged = [r["logged_s"] for r in rs if r["logged_s"] is not None]
            print("| %s | %s | %.1f | %.3f | %.3f | %s | %s |" % (
                shape, k, sizes[k] / args.locks, statistics.median(r["ready_s"] for r in rs),
                statistics.median(r["cpu_s"] for r in rs),
                "%.3f" % statistics.median(logged) if logged else "-",
                " ".join("%.1f" % r["load"] for r in rs)))
    for shape, sizes, runs in rows:
        for key, what in (("ready_s", "ready time"), ("cpu_s", "CPU time to ready")):
            ratio = statistics.median(a[key] / b[key]
                                      for a, b in zip(runs["latch"], runs["redis"]))
            print("%s: latchd/Redis %s %.2fx (median of per-round ratios; goal <= 0.5x)" % (
                shape, what, ratio))
        print("%s: latchd/Redis bytes per lock %.2fx (goal <= 1x)" % (
            shape, sizes["latch"] / sizes["redis"]))


def load_rounds(args, kinds, dirs, logs):
    runs = {k: [] for k in kinds}
    for rnd in range(args.rounds):
        order = kinds if rnd % 2 == 0 else list(reversed(kinds))
        for k in order:
            r = time_load(args, k, dirs[k], logs[k])
            runs[k].append(r)
            print("round %d %s: ready after %.3f s, CPU %.3f s (logged load %s s), "
                  "load avg %.2f" % (rnd, k, r["ready_s"], r["cpu_s"], r["logged_s"],
                                     r["load"]), flush=True)
    return runs


if __name__ == "__main__":
    main()
