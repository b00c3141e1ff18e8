"""The durable modes side by side (run.py --durable): latchd and redis-server started with the
same directives (appendonly yes, appendfsync always / everysec), and latchd without a journal,
interleaved in one run: acquire (SET NX PX) at c50 P1 and c50 P16, and the lock cycle
(SET NX PX + EVALSHA of the unlock script, per client).

Each journal goes into a fresh directory under --journal-root (default: bench/results/tmp-journal,
on the work tree's filesystem, not tmpfs, so that fdatasync reaches a disk); the report names
the filesystem. Rounds alternate the server order; the load average is recorded per round.
Goals (issue 10): always: latchd >= 1.5x Redis's rps at c50 P16, >= 1.2x at c50 P1, p99 no
worse; everysec: within 10% of latchd without a journal.

`python3 bench/durable.py --profile [--latchd PATH]`: where the time goes, in counts that a
loaded machine changes little (profile() below).
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

import run as R
from benchkit.report import fmt, loadavg, machine
from benchkit.stats import paired_ratio

MODES = ["latch-always", "redis-always", "latch-everysec", "redis-everysec", "latch-off"]


def filesystem_of(path):
    p = subprocess.run(["df", "-T", path], capture_output=True, text=True, timeout=10)
    fields = p.stdout.splitlines()[-1].split()
    return "%s (%s)" % (fields[1], fields[0])


def make_servers(args, root, log_dir):
    servers, dirs = {}, []
    for mode in MODES:
        kind, policy = mode.split("-")
        journal = []
        if policy != "off":
            d = tempfile.mkdtemp(prefix=mode + "-", dir=root)
            dirs.append(d)
            journal = ["--appendonly", "yes", "--appendfsync", policy, "--dir", d]
        if kind == "latch":
            argv = lambda p, j=journal: [args.latchd, "--port", str(p), "--bind", "127.0.0.1",
                                         "--io-threads", str(args.latch_io_threads),
                                         "--io-engine", args.io_engine] + j
        else:
            # RESP journal as latchd's (no RDB preamble), no snapshots.
            argv = lambda p, j=journal: ["redis-server", "--port", str(p), "--bind",
                                         "127.0.0.1", "--save", "", "--aof-use-rdb-preamble",
                                         "no"] + j
        servers[mode] = R.Server(mode, argv, log_dir)
    return servers, dirs


def workloads(scale):
    def n(x):
        return max(1000, int(x * scale))
    acquire = "SET lock:__rand_int__ %s NX PX 30000" % R.TOKEN
    out = []
    for c, p, count in [(50, 1, 20000), (50, 16, 200000)]:
        out.append(("acquire c%d P%d" % (c, p), R.rb(c, p, n(count), acquire)))
    out.append(("cycle SET NX + EVALSHA c50",
                R.lg_cycle(50, n(10000), "SET {k} {o} NX PX 30000", "EVALSHA <sha> 1 {k} {o}")))
    return out


def measure(args, servers, wls, rounds):
    rows = []
    for name, fn in wls:
        runs = {m: [] for m in servers}
        loads = []
        for rnd in range(rounds):
            order = list(servers) if rnd % 2 == 0 else list(reversed(list(servers)))
            loads.append(loadavg())
            for m in order:
                srv = servers[m]
                srv.flush()
                cpu0 = srv.cpu_seconds()
                try:
                    r = fn(args, srv)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    r = {"error": str(e)[:200]}
                if "error" in r or r.get("errors") or r.get("failed_clients"):
                    print("  %s %s: %s" % (name, m, r.get("error") or r.get("first_error")))
                    continue
                r["cpu_us"] = 1e6 * (srv.cpu_seconds() - cpu0) / r["units"]
                runs[m].append(r)
        row = {"workload": name, "load": loads, "servers": {}}
        for m, rs in runs.items():
            if rs:
                row["servers"][m] = {k: statistics.median(r[k] for r in rs)
                                     for k in ("rps", "p50_us", "p99_us", "cpu_us")}
                row["servers"][m]["rounds"] = len(rs)
        row["always_ratio"] = paired_ratio(runs["latch-always"], runs["redis-always"], "rps")
        row["always_p99_ratio"] = paired_ratio(runs["latch-always"], runs["redis-always"],
                                               "p99_us")
        row["everysec_ratio"] = paired_ratio(runs["latch-everysec"], runs["redis-everysec"],
                                             "rps")
        row["everysec_vs_off"] = paired_ratio(runs["latch-everysec"], runs["latch-off"], "rps")
        rows.append(row)
        print(one_line(row), flush=True)
    return rows


def one_line(row):
    parts = [row["workload"]]
    for m in MODES:
        d = row["servers"].get(m)
        parts.append("%s %s rps p99 %s us cpu %s us/req" % (
            m, fmt(d and d["rps"]), fmt(d and d["p99_us"]), fmt(d and d["cpu_us"], "%.1f")))
    parts.append("always %s (p99 %s), everysec/off %s" % (
        fmt(row["always_ratio"], "%.2fx"), fmt(row["always_p99_ratio"], "%.2fx"),
        fmt(row["everysec_vs_off"], "%.2fx")))
    return " | ".join(parts)


def markdown(report):
    lines = ["Durable modes, %s, %d rounds interleaved; journals on %s; %s" % (
        report["date"], report["rounds"], report["filesystem"], report["machine"]), "",
        "| workload | mode | latchd rps | Redis rps | latchd p99 us | Redis p99 us | "
        "latchd/Redis rps | p99 ratio | latchd everysec/off | CPU us/req latchd, Redis | "
        "load avg (per round) |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in report["rows"]:
        s = row["servers"]
        load = " ".join("%.1f" % x[0] for x in row["load"])
        for policy in ("always", "everysec"):
            lat, red = s.get("latch-" + policy, {}), s.get("redis-" + policy, {})
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s, %s | %s |" % (
                row["workload"], policy, fmt(lat.get("rps")), fmt(red.get("rps")),
                fmt(lat.get("p99_us")), fmt(red.get("p99_us")),
                fmt(row[policy + "_ratio"], "%.2fx"),
                fmt(row["always_p99_ratio"], "%.2fx") if policy == "always" else "",
                fmt(row["everysec_vs_off"], "%.2fx") if policy == "everysec" else "",
                fmt(lat.get("cpu_us"), "%.1f"), fmt(red.get("cpu_us"), "%.1f"), load))
        off = s.get("latch-off", {})
        lines.append("| %s | off (latchd) | %s | | %s | | | | | %s | |" % (
            row["workload"], fmt(off.get("rps")), fmt(off.get("p99_us")),
            fmt(off.get("cpu_us"), "%.1f")))
    return "\n".join(lines) + "\n"


def main(args):
    rounds = args.rounds or (2 if args.quick else 4)
    scale = 0.25 if args.quick else 1.0
    root = os.path.abspath(args.journal_root)
    os.makedirs(root, exist_ok=True)
    log_dir = os.path.join(R.RESULTS, "logs")
    os.makedirs(log_dir, exist_ok=True)
    servers, dirs = make_servers(args, root, log_dir)
    report = {"date": time.strftime("%Y-%m-%d %H:%M"), "rounds": rounds,
              "filesystem": filesystem_of(root), "machine": machine()}
    try:
        for s in servers.values():
            s.start()
        args.sha = {}
        for name, s in servers.items():
            sha = s.call("SCRIPT", "LOAD", R.UNLOCK_SCRIPT)
            if isinstance(sha, str):
                args.sha[name] = sha
        report["rows"] = measure(args, servers, workloads(scale), rounds)
    finally:
        for s in servers.values():
            s.stop()
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    table = markdown(report)
    with open(os.path.join(R.RESULTS, "durable.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(R.RESULTS, "durable.md"), "w") as f:
        f.write(table)
    print()
    print(table)


# ---------------------------------------------------------------- --profile

def thread_counters(pid):
    """utime+stime (s) and context switches, summed over the process's threads."""
    cpu, switches = R.proc_cpu_seconds(pid), 0
    for status in glob.glob("/proc/%d/task/*/status" % pid):
        with open(status) as f:
            for line in f:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    switches += int(line.split()[1])
    return cpu, switches


def sync_spans(trace_file):
    """(start, end) of every fdatasync in an `strace -ttt -T` log."""
    spans = []
    with open(trace_file) as f:
        for line in f:
            m = re.search(r"^\d+\s+([\d.]+) fdatasync\(.*<([\d.]+)>", line)
            if m:
                spans.append((float(m.group(1)), float(m.group(1)) + float(m.group(2))))
    return spans


def pct(values, q):
    values = sorted(values)
    return 1e6 * values[min(len(values) - 1, int(len(values) * q))] if values else 0


def profile_one(args, mode, clients, pipeline, requests, root, traced):
    """One server, one redis-benchmark run of SET NX PX. Traced: requests per fdatasync, sync
    time and the gap between syncs (strace, filtered to fdatasync by seccomp). Untraced: CPU
    and thread switches per request (/proc; strace's stops would inflate both)."""
    kind, policy = mode.split("-")
    d = tempfile.mkdtemp(prefix="profile-", dir=root)
    port = R.free_port()
    journal = [] if policy == "off" else ["--appendonly", "yes", "--appendfsync", policy,
                                          "--dir", d]
    if kind == "latch":
        argv = [args.latchd, "--port", str(port), "--bind", "127.0.0.1", "--io-threads", "1"]
    else:
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--aof-use-rdb-preamble", "no"]
    trace = os.path.join(d, "strace.log")
    prefix = ["strace", "-f", "-qq", "--seccomp-bpf", "-ttt", "-T", "-e", "trace=fdatasync",
              "-o", trace] if traced else []
    proc = subprocess.Popen(prefix + argv + journal, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=d)
    try:
        for _ in range(300):
            try:
                R.Resp(port).close()
                break
            except OSError:
                time.sleep(0.05)
        pid = proc.pid
        if traced:
            with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
                pid = int(f.read().split()[0])
        cpu0, sw0 = thread_counters(pid)
        r = R.run_redis_benchmark(port, clients, pipeline, requests,
                                  "SET lock:__rand_int__ %s NX PX 30000" % R.TOKEN, 1000000)
        cpu1, sw1 = thread_counters(pid)
        os.kill(pid, 15)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    head = "%-15s c%d P%-2d" % (mode, clients, pipeline)
    if not traced:
        shutil.rmtree(d, ignore_errors=True)
        return "%s %s rps | cpu %.1f us/req, %.3f thread switches/req" % (
            head, fmt(r.get("rps")), 1e6 * (cpu1 - cpu0) / requests, (sw1 - sw0) / requests)
    spans = sync_spans(trace)
    shutil.rmtree(d, ignore_errors=True)
    gaps = [b[0] - a[1] for a, b in zip(spans, spans[1:])]
    return ("%s (strace) %s fdatasyncs, %s requests each, sync p50 %s us, gap between syncs "
            "p10/p50/p90 %s/%s/%s us" % (
                head, len(spans), fmt(requests / max(1, len(spans))),
                fmt(pct([b - a for a, b in spans], .5)), fmt(pct(gaps, .1)),
                fmt(pct(gaps, .5)), fmt(pct(gaps, .9))))


def profile(args):
    root = os.path.abspath(args.journal_root)
    os.makedirs(root, exist_ok=True)
    print("load average %s at start" % loadavg())
    for clients, pipeline, requests in [(50, 1, 20000), (50, 16, 200000)]:
        for mode in ["latch-always", "redis-always"]:
            print(profile_one(args, mode, clients, pipeline, requests, root, True), flush=True)
        for mode in ["latch-always", "redis-always", "latch-everysec", "redis-everysec",
                     "latch-off"]:
            print(profile_one(args, mode, clients, pipeline, requests, root, False), flush=True)
    print("load average %s at end" % loadavg())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", action="store_true", required=True)
    ap.add_argument("--latchd", default=os.path.join(R.HERE, "..", "build", "rel", "server",
                                                     "latchd"))
    ap.add_argument("--journal-root", default=os.path.join(R.RESULTS, "tmp-journal"))
    profile(ap.parse_args())
