#!/usr/bin/env python3
"""The cluster's benchmark (issue 23): a latch cluster against etcd and Redis, in one run.

Throughput: the same lock loop on every system, 50 clients on 1,000 keys, an acquire with a
5 s TTL then a release of one's own lock:
  - latch, 3 Raft nodes (Release latchd, raft-peers on loopback), on the leader:
    `SET k o NX PX 5000` + the compare-and-delete script (EVALSHA), by bench/loadgen;
  - latch, 1 node with `appendfsync always`, and redis-server 7 with `appendfsync always`:
    the same loop and generator;
  - etcd (Debian's etcd-server), 3 members and 1: a lease (5 s) and a txn that puts the key
    with it only if absent; the release revokes the lease, which deletes the key only if it is
    still ours (etcd's own lock recipe, as its concurrency package does); over etcd's JSON
    gateway with keep-alive connections, by an asyncio generator (etcdload below).
Failover: kill -9 of the leader, then a `SET NX` (latch) or a txn put (etcd) tried on every
other node every 10 ms: the time from the kill to the first acknowledged write, over several
trials at the default election timeouts (latch 1000 ms, etcd 1000 ms).
Follower hop: the latency of one write sent to a follower against the same on the leader,
when followers forward (reported as refused while they answer -READONLY / -TRYAGAIN).

  python3 bench/cluster.py                      build (Release, build-bench-release/), run all
  python3 bench/cluster.py --no-build --seconds 10 --trials 5 --only throughput,failover

Prints a table and writes bench/results/cluster-<time>.json. Everything runs on this machine,
on 127.0.0.1 and free ports, in a temporary directory on disk (the fsyncs are real).
"""
import argparse
import asyncio
import base64
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as R  # noqa: E402
from benchkit.http import Conn  # noqa: E402
from benchkit.procs import free_port  # noqa: E402
from benchkit.report import machine  # noqa: E402

CLIENTS, KEYS, TTL_MS = 50, 1000, 5000


# ---------------------------------------------------------------- latch cluster

class Members:
    """n server processes on loopback; subclasses say how to start one and which leads."""

    stop_timeout = 10

    def wait_leader(self, seconds, exclude=()):
        """The index of a leader that acknowledges a write, within `seconds`, or None."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for i in range(self.n):
                if i in exclude or self.procs[i] is None or self.procs[i].poll() is not None:
                    continue
                if self.leads(i):
                    return i
            time.sleep(0.05)
        return None

    def kill(self, i):
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait(timeout=10)

    def stop(self):
        for p in self.procs:
            if p is not None and p.poll() is None:
                p.terminate()
        for p in self.procs:
            if p is not None:
                try:
                    p.wait(timeout=self.stop_timeout)
                except subprocess.TimeoutExpired:
                    p.kill()


class LatchCluster(Members):
    """n latchd processes as one Raft cluster on loopback."""

    def __init__(self, latchd, n, root, log_dir):
        self.latchd, self.n, self.root, self.log_dir = latchd, n, root, log_dir
        self.raft_ports = [free_port() for _ in range(n)]
        self.ports = [free_port() for _ in range(n)]
        self.peers = " ".join("%d=127.0.0.1:%d:%d" % (i + 1, self.raft_ports[i], self.ports[i])
                              for i in range(n))
        self.procs = [None] * n

    def argv(self, i):
        d = os.path.join(self.root, "node%d" % (i + 1))
        os.makedirs(d, exist_ok=True)
        return [self.latchd, "--port", str(self.ports[i]), "--bind", "127.0.0.1", "--dir", d,
                "--raft-id", str(i + 1), "--raft-peers", self.peers, "--raft-dir", d,
                "--io-threads", "1"]

    def start(self, i):
        log = open(os.path.join(self.log_dir, "latch-node%d.log" % (i + 1)), "a")
        self.procs[i] = subprocess.Popen(self.argv(i), stdout=log, stderr=subprocess.STDOUT,
                                         cwd="/tmp")

    def start_all(self):
        for i in range(self.n):
            self.start(i)
        return self.wait_leader(30)

    def role(self, i):
        try:
            c = R.Resp(self.ports[i], timeout=1.0)
            try:
                r = c.call("ROLE")
            finally:
                c.close()
            return r[0] if isinstance(r, list) and r else None
        except (OSError, ConnectionError, ValueError):
            return None

    def leads(self, i):
        return self.role(i) == "master" and try_set(self.ports[i], "probe:leader")


def try_set(port, key, timeout=0.5):
    """True when `SET key x NX PX 5000` is acknowledged +OK on this port."""
    try:
        c = R.Resp(port, timeout=timeout)
        try:
            return c.call("SET", key, "x", "NX", "PX", str(TTL_MS)) == "OK"
        finally:
            c.close()
    except (OSError, ConnectionError, ValueError):
        return False


# ---------------------------------------------------------------- etcd

class Etcd(Members):
    """n etcd members on loopback (v3 API over its JSON gateway)."""

    stop_timeout = 15

    def __init__(self, n, root, log_dir):
        self.n, self.root, self.log_dir = n, root, log_dir
        self.ports = [free_port() for _ in range(n)]
        self.peer_ports = [free_port() for _ in range(n)]
        self.cluster = ",".join("e%d=http://127.0.0.1:%d" % (i + 1, self.peer_ports[i])
                                for i in range(n))
        self.procs = [None] * n

    def argv(self, i, state="new"):
        d = os.path.join(self.root, "etcd%d" % (i + 1))
        return ["etcd", "--name", "e%d" % (i + 1), "--data-dir", d,
                "--listen-client-urls", "http://127.0.0.1:%d" % self.ports[i],
                "--advertise-client-urls", "http://127.0.0.1:%d" % self.ports[i],
                "--listen-peer-urls", "http://127.0.0.1:%d" % self.peer_ports[i],
                "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % self.peer_ports[i],
                "--initial-cluster", self.cluster, "--initial-cluster-state", state,
                "--initial-cluster-token", "latch-bench", "--log-level", "error"]

    def start(self, i, state="new"):
        log = open(os.path.join(self.log_dir, "etcd%d.log" % (i + 1)), "a")
        self.procs[i] = subprocess.Popen(self.argv(i, state), stdout=log,
                                         stderr=subprocess.STDOUT, cwd="/tmp")

    def start_all(self):
        for i in range(self.n):
            self.start(i)
        return self.wait_leader(60)

    def status(self, i):
        try:
            return post(self.ports[i], "/v3/maintenance/status", {}, timeout=1.0)
        except OSError:
            return None

    def leads(self, i):
        st = self.status(i)
        return bool(st and st.get("leader") and st["leader"] == st["header"].get("member_id")
                    and etcd_try_put(self.ports[i], "probe:leader"))


def b64(s):
    return base64.b64encode(s.encode()).decode()


def post(port, path, body, timeout=2.0):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read() or b"{}")


def etcd_try_put(port, key):
    """True when a put-if-absent txn commits on this member."""
    try:
        r = post(port, "/v3/kv/txn", {
            "compare": [{"key": b64(key), "target": "CREATE", "create_revision": "0"}],
            "success": [{"request_put": {"key": b64(key), "value": b64("x")}}]}, timeout=0.5)
        return "header" in r
    except (OSError, ValueError):
        return False


# The etcd load: CLIENTS keep-alive HTTP/1.1 connections (benchkit.http), each looping lease
# grant -> txn (put if absent, with the lease) -> lease revoke, for `seconds`.
async def etcd_call(conn, path, body):
    status, data = await conn.request("POST", path, body, timeout=10.0)
    if status != 200:
        raise OSError("etcd %s: HTTP %d %s" % (path, status, data[:200]))
    return json.loads(data or b"{}")


async def etcd_client(port, client, deadline, out):
    import random
    rng = random.Random(client)
    conn = Conn(port)
    owner = "owner-%06d" % client
    try:
        while time.monotonic() < deadline:
            key = "lock:%012d" % rng.randrange(KEYS)
            t0 = time.monotonic()
            lease = await etcd_call(conn, "/v3/lease/grant", {"TTL": TTL_MS // 1000})
            lid = lease.get("ID")
            if lid is None:
                out["errors"] += 1
                continue
            txn = await etcd_call(conn, "/v3/kv/txn", {
                "compare": [{"key": b64(key), "target": "CREATE", "create_revision": "0"}],
                "success": [{"request_put": {"key": b64(key), "value": b64(owner),
                                             "lease": lid}}]})
            await etcd_call(conn, "/v3/lease/revoke", {"ID": lid})
            if txn.get("succeeded"):
                out["cycles"] += 1
                out["lat"].append(time.monotonic() - t0)
            else:
                out["refused"] += 1
    finally:
        await conn.close()


def etcd_load(port, seconds):
    out = {"cycles": 0, "refused": 0, "errors": 0, "lat": []}
    start = time.monotonic()

    async def main():
        await asyncio.gather(*(etcd_client(port, c, start + seconds, out)
                               for c in range(CLIENTS)))
    asyncio.run(main())
    elapsed = time.monotonic() - start
    lat = sorted(out["lat"])
    return {"rps": out["cycles"] / elapsed, "cycles": out["cycles"], "refused": out["refused"],
            "errors": out["errors"],
            "p50_ms": 1000 * lat[len(lat) // 2] if lat else None,
            "p99_ms": 1000 * lat[int(len(lat) * 0.99)] if lat else None}


# ---------------------------------------------------------------- the loops

def resp_load(args, port, seconds):
    c = R.Resp(port)
    sha = c.call("SCRIPT", "LOAD", R.UNLOCK_SCRIPT)
    c.close()
    r = R.run_loadgen(args, port, {"mode": "cycle", "clients": CLIENTS, "keyspace": KEYS,
                                   "requests": 10 ** 9, "duration_ms": int(seconds * 1000),
                                   "acquire": "SET {k} {o} NX PX %d" % TTL_MS,
                                   "release": "EVALSHA %s 1 {k} {o}" % sha},
                      timeout=seconds + 60)
    if "p99_us" in r:
        r["p99_ms"] = r["p99_us"] / 1000
    return r


def throughput(args, root, log_dir):
    rows = {}
    for rnd in range(args.rounds):
        for name in ("latch-3", "latch-1-always", "redis-always", "etcd-3", "etcd-1"):
            d = tempfile.mkdtemp(prefix=name + "-", dir=root)
            print("round %d: %s ..." % (rnd + 1, name), flush=True)
            rows.setdefault(name, []).append(one_throughput(args, name, d, log_dir))
            shutil.rmtree(d, ignore_errors=True)
    return rows


def timed_cpu(load_fn, procs):
    """Runs load_fn() and returns its result with "cpu": the CPU seconds each process in
    `procs` (name -> pid) and the load generator (our children, or this process for the
    in-process etcd generator) spent during it, and the machine's busy seconds outside
    them ("other"), from /proc: where the cores went in the window."""
    def busy():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")  # minus idle and iowait
    before = {n: R.proc_cpu_seconds(p) for n, p in procs.items()}
    kids0, self0 = os.times(), busy()
    r = load_fn()
    kids1, self1 = os.times(), busy()
    cpu = {n: round(R.proc_cpu_seconds(p) - before[n], 2) for n, p in procs.items()}
    cpu["generator"] = round((kids1.children_user + kids1.children_system + kids1.user +
                              kids1.system) - (kids0.children_user + kids0.children_system +
                                               kids0.user + kids0.system), 2)
    cpu["other"] = round(max(0.0, (self1 - self0) - sum(cpu.values())), 2)
    r["cpu"] = cpu
    return r


def one_throughput(args, name, d, log_dir):
    load = os.getloadavg()[0]
    if name.startswith("latch-3"):
        cl = LatchCluster(args.latchd, 3, d, log_dir)
        try:
            leader = cl.start_all()
            if leader is None:
                return {"error": "no leader within 30 s"}
            procs = {("leader" if i == leader else "follower%d" % (i + 1)): cl.procs[i].pid
                     for i in range(cl.n)}
            r = timed_cpu(lambda: resp_load(args, cl.ports[leader], args.seconds), procs)
        finally:
            cl.stop()
    elif name.startswith("etcd"):
        e = Etcd(int(name[-1]), d, log_dir)
        try:
            leader = e.start_all()
            if leader is None:
                return {"error": "no etcd leader within 60 s"}
            procs = {("leader" if i == leader else "member%d" % (i + 1)): e.procs[i].pid
                     for i in range(e.n)}
            r = timed_cpu(lambda: etcd_load(e.ports[leader], args.seconds), procs)
        finally:
            e.stop()
    else:
        journal = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
        if name.startswith("latch"):
            argv = lambda p: [args.latchd, "--port", str(p), "--bind", "127.0.0.1",
                              "--io-threads", "1"] + journal
        else:
            argv = lambda p: ["redis-server", "--port", str(p), "--bind", "127.0.0.1",
                              "--save", "", "--aof-use-rdb-preamble", "no"] + journal
        s = R.Server(name, argv, log_dir)
        try:
            s.start()
            r = timed_cpu(lambda: resp_load(args, s.port, args.seconds), {"server": s.proc.pid})
        finally:
            s.stop()
    r["load"] = load
    return r


def failover(args, root, log_dir):
    out = {}
    d = tempfile.mkdtemp(prefix="failover-latch-", dir=root)
    cl = LatchCluster(args.latchd, 3, d, log_dir)
    try:
        out["latch-3"] = failover_trials(cl, args.trials, lambda i, k: try_set(cl.ports[i], k,
                                                                                0.2))
    finally:
        cl.stop()
    d = tempfile.mkdtemp(prefix="failover-etcd-", dir=root)
    e = Etcd(3, d, log_dir)
    try:
        out["etcd-3"] = failover_trials(e, args.trials,
                                        lambda i, k: etcd_try_put(e.ports[i], k), etcd=True)
    finally:
        e.stop()
    return out


def failover_trials(system, trials, write, etcd=False):
    times = []
    leader = system.start_all()
    for t in range(trials):
        if leader is None:
            return {"error": "no leader", "seconds": times}
        t0 = time.monotonic()
        system.kill(leader)
        others = [i for i in range(system.n) if i != leader]
        done = None
        while time.monotonic() - t0 < 30 and done is None:
            for i in others:
                if write(i, "failover:%d:%d" % (t, i)):
                    done = time.monotonic() - t0
                    break
            else:
                time.sleep(0.01)
        times.append(done)
        print("  failover trial %d: %s" % (t + 1, "%.2f s" % done if done else "none in 30 s"),
              flush=True)
        if etcd:
            system.start(leader, state="existing")
        else:
            system.start(leader)
        leader = system.wait_leader(30)
        time.sleep(1.0)  # let the restarted node catch up before the next kill
    ok = [x for x in times if x is not None]
    return {"seconds": times, "median": statistics.median(ok) if ok else None,
            "min": min(ok) if ok else None, "max": max(ok) if ok else None}


def follower_hop(args, root, log_dir, n=200):
    d = tempfile.mkdtemp(prefix="hop-", dir=root)
    cl = LatchCluster(args.latchd, 3, d, log_dir)
    try:
        leader = cl.start_all()
        follower = next(i for i in range(3) if i != leader)
        res = {}
        for name, i in (("leader", leader), ("follower", follower)):
            c = R.Resp(cl.ports[i])
            lat, refused = [], None
            for k in range(n):
                t0 = time.monotonic()
                r = c.call("SET", "hop:%s:%d" % (name, k), "x", "PX", str(TTL_MS))
                if r != "OK":
                    refused = str(r)
                    break
                lat.append(time.monotonic() - t0)
            c.close()
            lat.sort()
            res[name] = {"p50_ms": 1000 * lat[len(lat) // 2] if lat else None,
                         "refused": refused}
        return res
    finally:
        cl.stop()


def report(rows, fo, hop, args_seconds=10):
    lines = ["| system | lock cycles/s (median of rounds) | p99 ms | load |", "|---|---|---|---|"]
    cpu_lines = ["", "Where the CPU went (last round, CPU seconds in the window; us of CPU per "
                 "cycle, all processes but other):", "", "| system | CPU | us/cycle |",
                 "|---|---|---|"]
    med = {}
    for name, rs in rows.items():
        ok = [r for r in rs if "error" not in r]
        if not ok:
            lines.append("| %s | %s | | |" % (name, rs[0].get("error")))
            continue
        rps = statistics.median(r["rps"] for r in ok)
        med[name] = rps
        p99 = statistics.median(r.get("p99_ms") or 0 for r in ok)
        lines.append("| %s | %.0f | %.1f | %.1f |" % (name, rps, p99,
                                                    statistics.mean(r["load"] for r in ok)))
        last = ok[-1]
        if last.get("cpu"):
            cpu_lines.append("| %s | %s | %.0f |" % (
                name, ", ".join("%s %.1f s" % kv for kv in last["cpu"].items()),
                1e6 * sum(v for k, v in last["cpu"].items() if k != "other") /
                max(1, last["rps"] * args_seconds)))
    if len(cpu_lines) > 5:
        lines += cpu_lines
    if "latch-3" in med and "etcd-3" in med:
        lines.append("\nlatch-3 / etcd-3: **%.1fx**" % (med["latch-3"] / med["etcd-3"]))
    if "latch-3" in med and "latch-1-always" in med:
        lines.append("latch-3 / latch-1-always: **%.2fx**" % (med["latch-3"] / med["latch-1-always"]))
    for name, f in (fo or {}).items():
        lines.append("failover %s: median %s s, %s" % (
            name, "%.2f" % f["median"] if f.get("median") else "n/a",
            ", ".join("%.2f" % s if s else "none" for s in f.get("seconds", []))))
    if hop:
        lines.append("one SET on the leader p50 %s ms; on a follower: %s" % (
            "%.2f" % hop["leader"]["p50_ms"] if hop["leader"]["p50_ms"] else "n/a",
            "p50 %.2f ms" % hop["follower"]["p50_ms"] if hop["follower"]["p50_ms"]
            else "refused (%s)" % hop["follower"]["refused"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(R.ROOT, "build-bench-release"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--only", default="throughput,failover,hop")
    ap.add_argument("--root", default=os.path.join(R.RESULTS, "tmp-cluster"),
                    help="where the logs and data go (a disk, not tmpfs)")
    args = ap.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    R.build(args)
    args.latchd = os.path.join(args.build_dir, "server", "latchd")
    args.loadgen = os.path.join(args.build_dir, "bench", "latch_loadgen")
    for tool in ("etcd", "redis-server"):
        if not shutil.which(tool):
            sys.exit("needs %s (apt-get install etcd-server redis-server)" % tool)
    os.makedirs(args.root, exist_ok=True)
    root = tempfile.mkdtemp(prefix="run-", dir=args.root)
    log_dir = os.path.join(root, "logs")
    os.makedirs(log_dir)
    only = set(args.only.split(","))
    rows = throughput(args, root, log_dir) if "throughput" in only else {}
    fo = failover(args, root, log_dir) if "failover" in only else {}
    hop = follower_hop(args, root, log_dir) if "hop" in only else None
    table = report(rows, fo, hop, args.seconds)
    print(table)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = os.path.join(R.RESULTS, "cluster-%s.json" % stamp)
    with open(path, "w") as f:
        json.dump({"machine": machine(), "throughput": rows, "failover": fo, "hop": hop,
                   "table": table}, f, indent=1)
    print("wrote", path, "; logs in", log_dir)


if __name__ == "__main__":
    main()
