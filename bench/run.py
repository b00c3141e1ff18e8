#!/usr/bin/env python3
"""latchd measured side by side against redis-server (and a null backend), in one run.

    python3 bench/run.py --quick      # under 2 minutes
    python3 bench/run.py              # full, under 15 minutes
    python3 bench/run.py --update-readme   # full, and write the table into bench/README.md
    python3 bench/run.py --durable    # the journal: latchd and Redis with the same directives

It builds latchd, null_server and latch_loadgen in Release (build-bench-release/ unless
--build-dir is given), starts latchd, redis-server and null_server on free loopback ports, runs
each workload against them alternating A B C A B C for several rounds, and reports per workload
the median rps, p50 and p99 of each server, the median of the per-round ratios latch/Redis and
each server's CPU time per request (utime+stime from /proc/PID/stat). The null backend parses
RESP and answers without a store: it is the ceiling for this machine, not a competitor.

Results go to bench/results/ (latest.json, latest.md, ratios.png). Standard library only.
Every loop is bounded in count and every wait in time.
"""

import argparse
import datetime
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from benchkit.procs import free_port, proc_cpu_seconds
from benchkit.report import fmt, machine
from benchkit.stats import paired_ratio

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
TOKEN = "owner-0000000000000042"  # 22 bytes, the size of a typical lock token
# The unlock script of the Redis documentation; latchd recognises it and runs it natively.
UNLOCK_SCRIPT = ('if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1])'
                 ' else return 0 end')
NA = "n/a (command not supported)"


# ---------------------------------------------------------------- RESP client (control only)

class RespError(Exception):
    pass


class Resp:
    """A blocking RESP2 connection for control commands (INFO, DBSIZE, FLUSHALL, SCRIPT)."""

    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.file = self.sock.makefile("rb")

    def close(self):
        self.file.close()
        self.sock.close()

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))
        return self._read()

    def _read(self):
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("connection closed")
        kind, body = line[:1], line[1:-2]
        if kind == b"+":
            return body.decode()
        if kind == b"-":
            return RespError(body.decode())
        if kind == b":":
            return int(body)
        if kind == b"$":
            n = int(body)
            if n < 0:
                return None
            data = self.file.read(n + 2)
            return data[:-2].decode(errors="replace")
        if kind == b"*":
            n = int(body)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ConnectionError("not RESP: %r" % line)


def info_fields(conn, section):
    text = conn.call("INFO", section)
    fields = {}
    if isinstance(text, str):
        for line in text.splitlines():
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                fields[k] = v
    return fields


# ---------------------------------------------------------------- servers

class Server:
    def __init__(self, name, argv_for_port, log_dir):
        self.name = name
        self.port = free_port()
        self.argv = argv_for_port(self.port)
        self.log = open(os.path.join(log_dir, name + ".log"), "w")
        self.proc = None
        self.ctl = None

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd="/tmp")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited at start-up (see %s)" % (self.name, self.log.name))
            try:
                self.ctl = Resp(self.port)
                if self.ctl.call("PING") == "PONG":
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("%s did not answer PING within 15 s" % self.name)

    def stop(self):
        if self.ctl:
            self.ctl.close()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()

    def cpu_seconds(self):
        """utime + stime of the server process, in seconds."""
        return proc_cpu_seconds(self.proc.pid)

    def rss_bytes(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def call(self, *args):
        return self.ctl.call(*args)

    def flush(self):
        self.ctl.call("FLUSHALL")

    def supports(self, probes):
        """False when any probe command is unknown to this server."""
        for probe in probes:
            r = self.ctl.call(*probe)
            if isinstance(r, RespError) and ("unknown command" in str(r)
                                             or "unknown subcommand" in str(r)):
                return False
        return True


# ---------------------------------------------------------------- load generators

def run_redis_benchmark(port, clients, pipeline, requests, command, keyspace=100000):
    argv = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", str(clients),
            "-n", str(requests), "-P", str(pipeline), "-r", str(keyspace), "-q", "--csv"]
    argv += command.split()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    rows = [line for line in p.stdout.splitlines() if line.startswith('"')]
    if len(rows) < 2:
        return {"error": (p.stderr or p.stdout).strip()[:200] or "no CSV output"}
    header = [h.strip('"') for h in rows[0].split('","')]
    values = [v.strip('"') for v in rows[1].split('","')]
    row = dict(zip(header, values))
    return {"rps": float(row["rps"]), "p50_us": float(row["p50_latency_ms"]) * 1000,
            "p99_us": float(row["p99_latency_ms"]) * 1000, "units": requests, "errors": 0}


def run_loadgen(args, port, opts, timeout=300):
    argv = [args.loadgen, "--port", str(port)]
    for k, v in opts.items():
        argv += ["--" + k.replace("_", "-"), str(v)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0 or not p.stdout.strip():
        return {"error": p.stderr.strip()[:200] or "latch_loadgen exited %d" % p.returncode}
    return json.loads(p.stdout.strip().splitlines()[-1])


def spawn_loadgen(args, port, opts):
    argv = [args.loadgen, "--port", str(port)]
    for k, v in opts.items():
        argv += ["--" + k.replace("_", "-"), str(v)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def prefill(args, server, template, count):
    """Sends `count` requests of template ({i} = 0..count-1) with deep pipelines, untimed."""
    r = run_loadgen(args, server.port, {"mode": "pipeline", "clients": 4, "pipeline": 128,
                                        "requests": count, "command": template,
                                        "duration_ms": 120000})
    if "error" in r or r.get("errors"):
        raise RuntimeError("prefill on %s failed: %s" % (server.name,
                                                         r.get("error") or r.get("first_error")))


# ---------------------------------------------------------------- throughput workloads

class Workload:
    """One throughput workload: how to run it on each kind of server.

    runs maps a server kind ("latch", "redis", "null") to a function(args, server) -> result
    dict with rps, p50_us, p99_us, units. probes: commands latchd must know for the workload.
    """

    def __init__(self, name, measures, runs, probes=(), target=None):
        self.name = name
        self.measures = measures
        self.runs = runs
        self.probes = probes
        self.target = target


def rb(clients, pipeline, requests, command):
    def run(args, server):
        return run_redis_benchmark(server.port, clients, pipeline, requests, command)
    return run


def lg_release(clients, pipeline, requests, prefill_cmd, command):
    """Releases of prefilled locks: request i releases lock:{i}, so every release succeeds."""
    def run(args, server):
        prefill(args, server, prefill_cmd, requests)
        cmd = command.replace("<sha>", args.sha.get(server.name, ""))
        return run_loadgen(args, server.port, {"mode": "pipeline", "clients": clients,
                                               "pipeline": pipeline, "requests": requests,
                                               "command": cmd, "duration_ms": 60000})
    return run


def lg_cycle(clients, cycles, acquire, release):
    def run(args, server):
        rel = release.replace("<sha>", args.sha.get(server.name, ""))
        return run_loadgen(args, server.port, {"mode": "cycle", "clients": clients,
                                               "requests": cycles, "acquire": acquire,
                                               "release": rel, "duration_ms": 60000})
    return run


def lg_get(clients, pipeline, requests):
    def run(args, server):
        prefill(args, server, "SET lock:{i} %s PX 600000" % TOKEN, 100000)
        return run_redis_benchmark(server.port, clients, pipeline, requests, "GET lock:__rand_int__")
    return run


def throughput_workloads(scale):
    def n(x):
        return max(1000, int(x * scale))
    acquire = "SET lock:__rand_int__ %s NX PX 30000" % TOKEN
    w = []
    for c, p, count, target in [(1, 1, 6000, None),
                                (50, 1, 40000, "rps >= 1.0x, CPU/req <= 0.75x"),
                                (200, 1, 40000, "p99 <= 0.7x"), (1, 16, 40000, None),
                                (50, 16, 300000, ">= 1.5x"), (200, 16, 300000, None)]:
        same = rb(c, p, n(count), acquire)
        w.append(Workload("acquire c%d P%d" % (c, p),
                          "SET lock:<rand 100k> <22B> NX PX 30000 (redis-benchmark)",
                          {"latch": same, "redis": same, "null": same}, target=target))
    get = lg_get(50, 16, n(200000))
    w.append(Workload("GET c50 P16", "GET of 100k held locks (redis-benchmark)",
                      {"latch": get, "redis": get, "null": get}, target=">= 1.3x"))
    hot = rb(50, 1, n(40000), "SET lock:hot %s NX PX 30000" % TOKEN)
    w.append(Workload("hot key c50 P1", "SET NX PX on one key: one holder, the rest refused",
                      {"latch": hot, "redis": hot, "null": hot}))
    held = "SET lock:{i} %s PX 600000" % TOKEN
    evalsha = "EVALSHA <sha> 1 lock:{i} %s" % TOKEN
    for p, count in [(16, 200000), (1, 40000)]:
        ev = lg_release(50, p, n(count), held, evalsha)
        w.append(Workload("release EVALSHA c50 P%d" % p,
                          "compare-and-delete of held locks: EVALSHA of the unlock script "
                          "(latchd: native path)", {"latch": ev, "redis": ev, "null": ev},
                          probes=[("EVALSHA", "0" * 40, "0")],
                          target=">= 2.5x" if p == 16 else None))
    ev16 = lg_release(50, 16, n(200000), held, evalsha)
    delex = lg_release(50, 16, n(200000), held, "DELEX lock:{i} IFEQ %s" % TOKEN)
    w.append(Workload("release DELEX IFEQ c50 P16", "latchd DELEX key IFEQ token vs Redis EVALSHA",
                      {"latch": delex, "redis": ev16, "null": delex},
                      probes=[("DELEX", "bench:probe", "IFEQ", "x")]))
    lrel = lg_release(50, 16, n(200000), "LOCK.ACQUIRE lock:{i} %s 600000" % TOKEN,
                      "LOCK.RELEASE lock:{i} %s" % TOKEN)
    w.append(Workload("release LOCK.RELEASE c50 P16", "latchd LOCK.RELEASE vs Redis EVALSHA",
                      {"latch": lrel, "redis": ev16, "null": lrel},
                      probes=[("LOCK.RELEASE", "bench:probe", "x")]))
    cyc = lg_cycle(50, n(25000), "SET {k} {o} NX PX 30000", "EVALSHA <sha> 1 {k} {o}")
    w.append(Workload("cycle SET NX + EVALSHA c50", "acquire then release, per client, in cycles/s",
                      {"latch": cyc, "redis": cyc, "null": cyc},
                      probes=[("EVALSHA", "0" * 40, "0")]))
    lcyc = lg_cycle(50, n(25000), "LOCK.ACQUIRE {k} {o} 30000", "LOCK.RELEASE {k} {o}")
    w.append(Workload("cycle LOCK.ACQUIRE/RELEASE c50",
                      "latchd LOCK.ACQUIRE + LOCK.RELEASE vs Redis SET NX + EVALSHA",
                      {"latch": lcyc, "redis": cyc, "null": lcyc},
                      probes=[("LOCK.ACQUIRE", "bench:probe", "x", "1"),
                              ("LOCK.RELEASE", "bench:probe", "x")]))
    return w


def run_throughput(args, servers, workloads, rounds):
    results = []
    for wl in workloads:
        per = {name: {"runs": [], "cpu": 0.0, "units": 0, "status": None} for name in servers}
        for name, srv in servers.items():
            if name == "latch" and wl.probes and not srv.supports(wl.probes):
                per[name]["status"] = NA
        deadline = time.monotonic() + args.workload_timeout
        for rnd in range(rounds):
            order = list(servers) if rnd % 2 == 0 else list(reversed(list(servers)))
            for name in order:
                srv = servers[name]
                if per[name]["status"] or time.monotonic() > deadline:
                    continue
                srv.flush()
                cpu0 = srv.cpu_seconds()
                try:
                    r = wl.runs[name](args, srv)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    r = {"error": str(e)[:200]}
                cpu = srv.cpu_seconds() - cpu0
                if "error" in r or r.get("errors") or r.get("failed_clients"):
                    msg = r.get("error") or r.get("first_error") or r.get("failure")
                    per[name]["status"] = "failed: %s" % msg
                    continue
                per[name]["runs"].append(r)
                per[name]["cpu"] += cpu
                per[name]["units"] += r["units"]
        results.append(summarise(wl, per))
        print_row(results[-1])
    return results


def summarise(wl, per):
    out = {"workload": wl.name, "measures": wl.measures, "target": wl.target, "servers": {}}
    for name, d in per.items():
        runs = d["runs"]
        if not runs:
            out["servers"][name] = {"status": d["status"] or "not run"}
            continue
        out["servers"][name] = {
            "rps": statistics.median(r["rps"] for r in runs),
            "p50_us": statistics.median(r["p50_us"] for r in runs),
            "p99_us": statistics.median(r["p99_us"] for r in runs),
            "cpu_us_per_req": 1e6 * d["cpu"] / d["units"] if d["units"] else None,
            "rounds": len(runs),
            "status": d["status"],
        }
    lat, red = per.get("latch", {}).get("runs", []), per.get("redis", {}).get("runs", [])
    nul = per.get("null", {}).get("runs", [])
    k = min(len(lat), len(red))
    out["ratio"] = paired_ratio(lat, red, "rps")
    out["p99_ratio"] = (paired_ratio(lat, red, "p99_us")
                        if k and all(red[i]["p99_us"] > 0 for i in range(k)) else None)
    out["null_ratio"] = paired_ratio(nul, red, "rps")
    s = out["servers"]
    if s.get("latch", {}).get("cpu_us_per_req") and s.get("redis", {}).get("cpu_us_per_req"):
        out["cpu_ratio"] = s["latch"]["cpu_us_per_req"] / s["redis"]["cpu_us_per_req"]
    else:
        out["cpu_ratio"] = None
    return out


def print_row(r):
    s = r["servers"]
    parts = [r["workload"]]
    for name in ("latch", "redis", "null"):
        d = s.get(name, {})
        if "rps" in d:
            parts.append("%s %s rps p50 %s p99 %s us cpu %s us/req" % (
                name, fmt(d["rps"]), fmt(d["p50_us"]), fmt(d["p99_us"]),
                fmt(d["cpu_us_per_req"], "%.1f")))
        else:
            parts.append("%s %s" % (name, d.get("status")))
    parts.append("ratio %s" % fmt(r["ratio"], "%.2fx"))
    print(" | ".join(parts), flush=True)


# ---------------------------------------------------------------- memory per lock

def run_memory(args, servers, count):
    out = {}
    for name in ("latch", "redis"):
        srv = servers[name]
        srv.flush()
        time.sleep(0.2)
        mem0 = int(info_fields(srv.ctl, "memory").get("used_memory", 0))
        rss0 = srv.rss_bytes()
        prefill(args, srv, "SET lock:{i} %s NX PX 3600000" % TOKEN, count)
        size = srv.call("DBSIZE")
        mem1 = int(info_fields(srv.ctl, "memory").get("used_memory", 0))
        rss1 = srv.rss_bytes()
        out[name] = {"keys": size, "used_memory_per_key": (mem1 - mem0) / max(1, size),
                     "rss_per_key": (rss1 - rss0) / max(1, size)}
        srv.flush()
    # The same locks taken with latchd's LOCK.ACQUIRE (the fencing token is stored with the
    # key): used_memory only, since the heap freed by the FLUSHALL above stays resident.
    srv = servers["latch"]
    mem0 = int(info_fields(srv.ctl, "memory").get("used_memory", 0))
    prefill(args, srv, "LOCK.ACQUIRE lock:{i} %s 3600000" % TOKEN, count)
    size = srv.call("DBSIZE")
    mem1 = int(info_fields(srv.ctl, "memory").get("used_memory", 0))
    out["latch_lock_acquire_per_key"] = (mem1 - mem0) / max(1, size)
    srv.flush()
    out["ratio"] = out["latch"]["used_memory_per_key"] / out["redis"]["used_memory_per_key"]
    out["rss_ratio"] = out["latch"]["rss_per_key"] / max(1, out["redis"]["rss_per_key"])
    out["lock_acquire_ratio"] = (out["latch_lock_acquire_per_key"] /
                                 out["redis"]["used_memory_per_key"])
    print("memory per lock (%d keys): latch %.0f B (rss %.0f B), redis %.0f B (rss %.0f B), "
          "ratio %.2fx" % (count, out["latch"]["used_memory_per_key"], out["latch"]["rss_per_key"],
                           out["redis"]["used_memory_per_key"], out["redis"]["rss_per_key"],
                           out["ratio"]), flush=True)
    print("memory per LOCK.ACQUIRE lock: latch %.0f B, ratio to Redis's SET NX PX %.2fx"
          % (out["latch_lock_acquire_per_key"], out["lock_acquire_ratio"]), flush=True)
    return out


# ---------------------------------------------------------------- mass expiry

def concurrent_acquire(duration_ms):
    return {"mode": "pipeline", "clients": 50, "pipeline": 1, "requests": 10_000_000,
            "duration_ms": duration_ms, "keyspace": 100000,
            "command": "SET other:{r} %s NX PX 30000" % TOKEN}


def expiry_round(args, srv, count, window_ms):
    srv.flush()
    quiet = run_loadgen(args, srv.port, concurrent_acquire(window_ms))
    srv.flush()
    base_expired = int(info_fields(srv.ctl, "stats").get("expired_keys", 0))
    fill_start = time.monotonic()
    prefill(args, srv, "SET exp:{i} %s PX 2000" % TOKEN, count)
    fill_end = time.monotonic()
    last_deadline = fill_end + 2.0  # the last SET was answered before fill_end
    load = spawn_loadgen(args, srv.port, concurrent_acquire(window_ms))
    done_at = None
    poll_deadline = fill_end + 2.0 + args.expiry_timeout
    # Poll until every filled key has been reclaimed. expired_keys counts reclaimed keys in both
    # servers (DBSIZE would too, but it also counts the concurrent workload's keys).
    while time.monotonic() < poll_deadline:
        expired = int(info_fields(srv.ctl, "stats").get("expired_keys", 0)) - base_expired
        if expired >= count:
            done_at = time.monotonic()
            break
        time.sleep(0.01)
    try:
        stdout, _ = load.communicate(timeout=window_ms / 1000 + 30)
        busy = json.loads(stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        load.kill()
        load.communicate(timeout=10)
        busy = {"error": "concurrent workload failed"}
    return {"fill_seconds": fill_end - fill_start,
            "reclaimed_after_last_deadline_s": None if done_at is None else done_at - last_deadline,
            "quiet": quiet, "busy": busy}


def run_expiry(args, servers, count, rounds, window_ms):
    per = {"latch": [], "redis": []}
    for rnd in range(rounds):
        order = ["latch", "redis"] if rnd % 2 == 0 else ["redis", "latch"]
        for name in order:
            per[name].append(expiry_round(args, servers[name], count, window_ms))
    out = {"keys": count, "window_ms": window_ms}
    for name, rs in per.items():
        def med(f):
            vals = [f(r) for r in rs]
            vals = [v for v in vals if v is not None]
            return statistics.median(vals) if vals else None
        out[name] = {
            "reclaimed_after_last_deadline_s": med(lambda r: r["reclaimed_after_last_deadline_s"]),
            "fill_seconds": med(lambda r: r["fill_seconds"]),
            "quiet_rps": med(lambda r: r["quiet"].get("rps")),
            "quiet_p99_us": med(lambda r: r["quiet"].get("p99_us")),
            "busy_rps": med(lambda r: r["busy"].get("rps")),
            "busy_p99_us": med(lambda r: r["busy"].get("p99_us")),
        }
        q, b = out[name]["quiet_p99_us"], out[name]["busy_p99_us"]
        out[name]["p99_busy_over_quiet"] = b / q if q and b else None
        print("mass expiry %s: reclaimed %s s after the last deadline, p99 %s -> %s us (x%s), "
              "rps %s -> %s" % (name, fmt(out[name]["reclaimed_after_last_deadline_s"], "%.2f"),
                                fmt(q), fmt(b), fmt(out[name]["p99_busy_over_quiet"], "%.2f"),
                                fmt(out[name]["quiet_rps"]), fmt(out[name]["busy_rps"])),
              flush=True)
    return out


# ---------------------------------------------------------------- contended handoff

def run_handoff(args, servers, rounds, duration_ms):
    variants = [
        ("latch", "LOCK.ACQUIRE WAIT (queued)", "LOCK.ACQUIRE {k} {o} 5000 WAIT 1000",
         "LOCK.RELEASE {k} {o}", 0, 0),
        ("latch", "SET NX + retry 50-250 ms", "SET {k} {o} NX PX 5000",
         "EVALSHA <sha> 1 {k} {o}", 50, 250),
        ("redis", "SET NX + retry 50-250 ms", "SET {k} {o} NX PX 5000",
         "EVALSHA <sha> 1 {k} {o}", 50, 250),
        ("latch", "SET NX + retry 1-5 ms", "SET {k} {o} NX PX 5000",
         "EVALSHA <sha> 1 {k} {o}", 1, 5),
        ("redis", "SET NX + retry 1-5 ms", "SET {k} {o} NX PX 5000",
         "EVALSHA <sha> 1 {k} {o}", 1, 5),
    ]
    out = []
    for name, label, acq, rel, lo, hi in variants:
        srv = servers[name]
        if acq.startswith("LOCK.") and not srv.supports([("LOCK.ACQUIRE", "bench:probe", "x", "1"),
                                                         ("LOCK.RELEASE", "bench:probe", "x")]):
            out.append({"server": name, "variant": label, "status": NA})
            continue
        runs = []
        for _ in range(rounds):
            srv.flush()
            r = run_loadgen(args, srv.port, {
                "mode": "handoff", "clients": 100, "hold_ms": 1, "requests": 1_000_000,
                "duration_ms": duration_ms, "acquire": acq,
                "release": rel.replace("<sha>", args.sha.get(name, "")),
                "retry_min_ms": lo, "retry_max_ms": hi})
            runs.append(r)
        good = [r for r in runs if "error" not in r and not r.get("errors")]
        if not good:
            out.append({"server": name, "variant": label,
                        "status": "failed: %s" % (runs[0].get("error") or runs[0].get("first_error"))})
            continue
        row = {"server": name, "variant": label, "status": None}
        for key in ("rps", "commands_per_grant", "p50_us", "p99_us", "wait_p50_us",
                    "wait_p99_us", "overlapping_grants"):
            row[key] = statistics.median(r[key] for r in good)
        out.append(row)
        print("handoff %s %s: %.0f grants/s, %.2f commands/grant, handoff p50 %.0f us p99 %.0f us,"
              " overlaps %d" % (name, label, row["rps"], row["commands_per_grant"], row["p50_us"],
                                row["p99_us"], row["overlapping_grants"]), flush=True)
    return out


# ---------------------------------------------------------------- report

def markdown(report):
    m = report["machine"]
    lines = [
        "Run %s (%s mode, %d rounds), %d CPUs (%s), 1-min load at start %s. "
        "latchd --io-threads %d --io-engine %s vs redis-server %s; ratio = median of per-round latch/Redis rps; "
        "null = the ceiling (parses, answers, stores nothing). Latency in us, CPU in us/request."
        % (report["date"], report["mode"], report["rounds"], m["nproc"], m["model"],
           m["load_at_start"], report["latch_io_threads"], report.get("io_engine", "epoll"),
           report["redis_version"]), "",
        "| workload | latch rps | p50 | p99 | CPU | Redis rps | p50 | p99 | CPU | latch/Redis |"
        " null rps (ceiling) | null/Redis | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in report["throughput"]:
        cells = [r["workload"]]
        for name in ("latch", "redis"):
            d = r["servers"].get(name, {})
            if "rps" in d:
                cells += [fmt(d["rps"]), fmt(d["p50_us"]), fmt(d["p99_us"]),
                          fmt(d["cpu_us_per_req"], "%.2f")]
            else:
                cells += [d.get("status", "-"), "", "", ""]
        ratio = fmt(r["ratio"], "%.2fx")
        if r.get("cpu_ratio"):
            ratio += " (CPU %.2fx, p99 %s)" % (r["cpu_ratio"], fmt(r.get("p99_ratio"), "%.2fx"))
        nd = r["servers"].get("null", {})
        cells += [ratio, fmt(nd.get("rps")), fmt(r["null_ratio"], "%.2fx"), r["target"] or ""]
        lines.append("| " + " | ".join(cells) + " |")
    mem = report.get("memory")
    if mem:
        lines += ["", "Memory per lock (%d keys, 22-byte tokens, PX): latch %.0f B used_memory "
                  "(%.0f B RSS), Redis %.0f B (%.0f B RSS): **%.2fx** (RSS %.2fx); target <= 0.5x."
                  % (mem["latch"]["keys"], mem["latch"]["used_memory_per_key"],
                     mem["latch"]["rss_per_key"], mem["redis"]["used_memory_per_key"],
                     mem["redis"]["rss_per_key"], mem["ratio"], mem["rss_ratio"])]
        if "latch_lock_acquire_per_key" in mem:
            lines += ["", "The same locks taken with LOCK.ACQUIRE (fencing token stored with the "
                      "key): latch %.0f B used_memory: %.2fx Redis's SET NX PX lock."
                      % (mem["latch_lock_acquire_per_key"], mem["lock_acquire_ratio"])]
    exp = report.get("expiry")
    if exp:
        lines += ["", "Mass expiry (%d keys PX 2000; concurrent SET NX PX c50 P1 for %d ms from the "
                  "end of the fill):" % (exp["keys"], exp["window_ms"]), "",
                  "| server | reclaimed after last deadline (s) | quiet rps | busy rps | quiet p99 |"
                  " busy p99 | busy/quiet p99 |", "|---|---:|---:|---:|---:|---:|---:|"]
        for name in ("latch", "redis"):
            d = exp[name]
            reclaimed = d["reclaimed_after_last_deadline_s"]
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                name, "> %d" % report["expiry_timeout"] if reclaimed is None
                else "%.2f" % reclaimed, fmt(d["quiet_rps"]),
                fmt(d["busy_rps"]), fmt(d["quiet_p99_us"]), fmt(d["busy_p99_us"]),
                fmt(d["p99_busy_over_quiet"], "%.2fx")))
    ho = report.get("handoff")
    if ho:
        lines += ["", "Contended handoff (100 clients, one lock, hold 1 ms):", "",
                  "| server | acquire | grants/s | commands/grant | handoff p50 | handoff p99 |"
                  " wait p99 | overlaps |", "|---|---|---:|---:|---:|---:|---:|---:|"]
        for r in ho:
            if r.get("status"):
                lines.append("| %s | %s | %s | | | | | |" % (r["server"], r["variant"], r["status"]))
                continue
            lines.append("| %s | %s | %.0f | %.2f | %.0f | %.0f | %.0f | %d |" % (
                r["server"], r["variant"], r["rps"], r["commands_per_grant"], r["p50_us"],
                r["p99_us"], r["wait_p99_us"], r["overlapping_grants"]))
    return "\n".join(lines) + "\n"


def plot(report, png):
    """A bar chart of latch/Redis and null/Redis rps ratios per workload (gnuplot)."""
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("gnuplot not found (apt-get install gnuplot-nox): no plot", file=sys.stderr)
        return False
    rows = []
    for r in report["throughput"]:
        rows.append((r["workload"], r["ratio"], r["null_ratio"]))
    ho = {(x["server"], x["variant"]): x for x in report.get("handoff", []) if not x.get("status")}
    red = ho.get(("redis", "SET NX + retry 50-250 ms"))
    q = ho.get(("latch", "LOCK.ACQUIRE WAIT (queued)"))
    if red and q and red["rps"]:
        rows.append(("handoff grants/s (queued vs poll)", q["rps"] / red["rps"], None))
    data = os.path.join(RESULTS, "ratios.dat")
    with open(data, "w") as f:
        for name, ratio, null in rows:
            f.write('"%s" %s %s\n' % (name, "NaN" if ratio is None else ratio,
                                      "NaN" if null is None else null))
    script = """
set terminal pngcairo size 1400,700 noenhanced font ",10"
set output '%s'
set title "latchd / redis-server rps ratio per workload (%s, %s); null = ceiling"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -35 left
set ylabel "ratio to Redis (higher is better)"
set yrange [0:*]
set grid ytics
set key top left
set bmargin 9
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2 lc rgb "red"
plot '%s' using 2:xtic(1) title "latchd / Redis" lc rgb "#3b7dd8", \\
     '' using 3 title "null backend / Redis (ceiling)" lc rgb "#bbbbbb"
""" % (png, report["date"], report["mode"], data)
    p = subprocess.run([gnuplot], input=script, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        print("gnuplot failed: %s" % p.stderr.strip()[:300], file=sys.stderr)
        return False
    return True


def update_readme(table):
    path = os.path.join(HERE, "README.md")
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    with open(path) as f:
        text = f.read()
    if begin not in text or end not in text:
        print("README.md has no results markers: not updated", file=sys.stderr)
        return
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + table + end + tail)


# ---------------------------------------------------------------- main

def build(args):
    if args.no_build:
        return
    build_dir = args.build_dir
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        # -Wno-restrict: GCC 12 reports a false -Wrestrict at -O2/-O3 in std::string operator+.
        subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                        "-DLATCH_BUILD_TESTS=OFF", "-DLATCH_BUILD_BENCH=ON",
                        "-DCMAKE_CXX_FLAGS=-Wno-restrict"], check=True, timeout=600)
    subprocess.run(["cmake", "--build", build_dir, "-j2", "--target", "latchd", "null_server",
                    "latch_loadgen"], check=True, timeout=3600)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small counts, 2 rounds (< 2 minutes); full: 4 rounds")
    ap.add_argument("--rounds", type=int, help="rounds per workload (default 2 quick, 5 full)")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-bench-release"))
    ap.add_argument("--no-build", action="store_true", help="use the binaries in --build-dir")
    ap.add_argument("--only", default="", help="comma-separated subset: throughput,memory,"
                    "expiry,handoff (default: all)")
    # One io thread: the load generator takes a core of this 2-core machine, and a second
    # server thread then only adds wake-ups and preemption (measured: CPU per unpipelined
    # request 0.72-0.81x Redis's with 1, 1.16-1.19x with 2).
    ap.add_argument("--latch-io-threads", type=int, default=1,
                    help="latchd's --io-threads (default 1)")
    # io-engine (issue 26, goal 3): latchd's --io-engine, and null_server's --engine, so that the
    # ceiling is measured on the same engine.
    ap.add_argument("--io-engine", choices=["epoll", "uring"], default="epoll",
                    help="latchd's --io-engine and null_server's --engine (default epoll)")
    ap.add_argument("--filter", default="", help="run throughput workloads whose name contains this")
    ap.add_argument("--update-readme", action="store_true", help="write the table into README.md")
    # Durable modes: both servers journal with the same directives (appendonly yes and this
    # appendfsync), each into a fresh directory, so the table compares like with like.
    ap.add_argument("--appendfsync", choices=["always", "everysec", "no"],
                    help="run latchd and redis-server with appendonly yes and this fsync policy")
    ap.add_argument("--durable", action="store_true",
                    help="only the durable modes side by side (durable.py): always, everysec, off")
    ap.add_argument("--journal-root", default=os.path.join(RESULTS, "tmp-journal"),
                    help="where --durable puts the journals (a disk, not tmpfs)")
    args = ap.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    build(args)
    args.latchd = os.path.join(args.build_dir, "server", "latchd")
    args.null = os.path.join(args.build_dir, "bench", "null_server")
    args.loadgen = os.path.join(args.build_dir, "bench", "latch_loadgen")
    for path in (args.latchd, args.loadgen) + (() if args.durable else (args.null,)):
        if not os.access(path, os.X_OK):
            sys.exit("missing %s (build it, or drop --no-build)" % path)
    if not shutil.which("redis-server") or not shutil.which("redis-benchmark"):
        sys.exit("needs redis-server and redis-benchmark (apt-get install redis-server redis-tools)")

    if args.durable:
        import durable
        return durable.main(args)
    quick = args.quick
    rounds = args.rounds or (2 if quick else 4)
    scale = 0.25 if quick else 1.0
    args.workload_timeout = 60 if quick else 240
    args.expiry_timeout = 30
    only = set(filter(None, args.only.split(","))) or {"throughput", "memory", "expiry", "handoff"}
    os.makedirs(RESULTS, exist_ok=True)
    log_dir = os.path.join(RESULTS, "logs")
    os.makedirs(log_dir, exist_ok=True)

    started = time.monotonic()
    journal = {"latch": [], "redis": ["--appendonly", "no"]}
    journal_dirs = []
    if args.appendfsync:
        for name in journal:
            d = tempfile.mkdtemp(prefix="latch-bench-%s-" % name)
            journal_dirs.append(d)
            journal[name] = ["--appendonly", "yes", "--appendfsync", args.appendfsync,
                             "--dir", d]
    servers = {
        "latch": Server("latch", lambda p: [args.latchd, "--port", str(p), "--bind", "127.0.0.1",
                                            "--io-threads", str(args.latch_io_threads),
                                            "--io-engine", args.io_engine]
                        + journal["latch"], log_dir),
        "redis": Server("redis", lambda p: ["redis-server", "--port", str(p), "--bind",
                                            "127.0.0.1", "--save", ""] + journal["redis"],
                        log_dir),
        "null": Server("null", lambda p: [args.null, "--port", str(p), "--engine", args.io_engine],
                       log_dir),
    }
    report = {"expiry_timeout": args.expiry_timeout,
              "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
              "mode": "quick" if quick else "full", "rounds": rounds, "machine": machine(),
              "latch_io_threads": args.latch_io_threads, "appendfsync": args.appendfsync or "off",
              "io_engine": args.io_engine}
    try:
        for s in servers.values():
            s.start()
        report["redis_version"] = info_fields(servers["redis"].ctl, "server").get(
            "redis_version", "?")
        args.sha = {}
        for name, s in servers.items():
            sha = s.call("SCRIPT", "LOAD", UNLOCK_SCRIPT)
            if isinstance(sha, str):
                args.sha[name] = sha
        # Memory first, on fresh processes, so that earlier workloads do not leave freed pages.
        if "memory" in only:
            report["memory"] = run_memory(args, servers, 200000 if quick else 1000000)
        if "throughput" in only:
            wls = [w for w in throughput_workloads(scale) if args.filter in w.name]
            report["throughput"] = run_throughput(args, servers, wls, rounds)
        else:
            report["throughput"] = []
        if "expiry" in only:
            report["expiry"] = run_expiry(args, servers, 200000 if quick else 1000000,
                                          1 if quick else 2, 4000 if quick else 6000)
        if "handoff" in only:
            report["handoff"] = run_handoff(args, servers, 1 if quick else 2,
                                            2000 if quick else 5000)
    finally:
        for s in servers.values():
            s.stop()
        for d in journal_dirs:
            shutil.rmtree(d, ignore_errors=True)
    report["seconds"] = time.monotonic() - started
    table = markdown(report)
    with open(os.path.join(RESULTS, "latest.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(RESULTS, "latest.md"), "w") as f:
        f.write(table)
    if report["throughput"]:
        plot(report, os.path.join(RESULTS, "ratios.png"))
    if args.update_readme:
        update_readme(table)
    print()
    print(table)
    print("done in %.0f s; results in %s" % (report["seconds"], RESULTS))


if __name__ == "__main__":
    main()
