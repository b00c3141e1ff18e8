#!/usr/bin/env python3
"""End-to-end load test of the reservation demo: Redis vs latchd as its lock server, in one run.

    python3 bench/demo_load.py --quick    # under 2 minutes: 2 rounds, 50 virtual users
    python3 bench/demo_load.py            # under 6 minutes: 3 rounds, 200 virtual users

It starts, on 127.0.0.1 and free ports picked at run time, a real PostgreSQL 15 (initdb +
postgres in a temp dir, as the `postgres` user when run as root), redis-server, latchd and two
`latch-reservation` instances: one with --lock-url redis://...:<redis>, one with latchd's URL,
each on its own database. It then runs the scenarios of the Go service the demo grew from
against each backend, alternating the order every round (A B, B A, ...):

  mixed       N virtual users for T s, 80 % reads (GET event, list available seats) and 20 %
              writes (reserve 1 available seat with an Idempotency-Key; confirm or cancel half
              of them later): rps, p50/p95/p99, errors (5xx, connection errors), 409s, and the
              CPU time per request of PostgreSQL, the service, the lock server and this client
  one seat    50 users reserve the same seat at once: exactly one 201, 49 x 409
  3 instances two more service instances (same lock server and database), 100 users on one
              seat spread round-robin over the three: exactly one 201
  1000 seats  1,000 bookings of different seats, 50 in flight: all 201, and how long
  bulk        create an event with 100,000 seats: seats/s (no lock server involved)

It prints a Markdown table per scenario (median over rounds, and the median of the per-round
ratios latch/Redis), writes bench/results/demo_load.md and .json, stops everything and removes
the temp dir (also on Ctrl-C or error), and exits 1 if a correctness check failed.
Python 3 standard library only; every loop is bounded in count and every wait in time.
"""

import argparse
import asyncio
import collections
import datetime
import json
import math
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
BACKENDS = ("redis", "latch")
LABEL = {"redis": "Redis", "latch": "latchd"}


class Failure(Exception):
    """Something needed is missing or did not start: the message says what to do."""


# ---------------------------------------------------------------- processes

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres_kwargs():
    """Popen arguments that run a child as the postgres user when we are root (initdb and
    postgres refuse root), like demo/reservation/run.sh's `runuser -u postgres --`."""
    if os.geteuid() != 0:
        return {}
    import pwd
    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        raise Failure("running as root, but there is no `postgres` user to run PostgreSQL as "
                      "(apt-get install postgresql)")
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}


class Proc:
    """A child in its own process group (so that stopping it stops everything it started)."""

    def __init__(self, name, argv, log_path, stop_signal=signal.SIGTERM, stdout_pipe=False,
                 **popen):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.stop_signal = stop_signal
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE if stdout_pipe else self.log,
                                     stderr=self.log, start_new_session=True, cwd="/tmp",
                                     **popen)
        self.pid = self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def log_tail(self, n=1500):
        try:
            with open(self.log_path, "rb") as f:
                data = f.read()
            return data[-n:].decode(errors="replace").strip()
        except OSError:
            return ""

    def stop(self, timeout=10):
        if self.proc.poll() is None:
            for sig in (self.stop_signal, signal.SIGKILL):
                try:
                    os.killpg(self.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(timeout=timeout)
                    break
                except subprocess.TimeoutExpired:
                    continue
        # Anything left in the group (a postgres backend, say): no survivors.
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        if self.proc.stdout:
            self.proc.stdout.close()
        self.log.close()


def proc_cpu_jiffies(pid, children_of=False):
    """utime+stime of pid (+ cutime+cstime and every live child's when children_of)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    total = int(fields[11]) + int(fields[12])
    if not children_of:
        return total
    total += int(fields[13]) + int(fields[14])
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                cf = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(cf[1]) == pid:
            total += int(cf[11]) + int(cf[12])
    return total


def machine_busy_jiffies():
    """Busy jiffies of the whole machine (every CPU), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]) - v[3] - v[4]  # minus idle and iowait


def wait_port(port, proc, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not proc.alive():
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class Postgres:
    def __init__(self, bindir, tmp, durable):
        self.bindir = bindir
        self.tmp = tmp
        self.durable = durable
        self.kw = as_postgres_kwargs()
        self.data = os.path.join(tmp, "pgdata")
        self.proc = None
        self.port = None

    def start(self):
        log = os.path.join(self.tmp, "initdb.log")
        with open(log, "wb") as f:
            p = subprocess.run([os.path.join(self.bindir, "initdb"), "-D", self.data, "-U",
                                "latch", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                               stdout=f, stderr=subprocess.STDOUT, cwd="/tmp", timeout=120,
                               **self.kw)
        if p.returncode != 0:
            with open(log, errors="replace") as f:
                raise Failure("initdb failed:\n" + f.read()[-1500:])
        settings = ["listen_addresses=127.0.0.1", "unix_socket_directories=" + self.tmp,
                    "max_connections=200", "dynamic_shared_memory_type=mmap",
                    "log_min_messages=warning"]
        if not self.durable:  # what the demo's tests use
            settings += ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
        self.settings = settings
        for _ in range(3):  # a free port can be taken between picking and binding it
            self.port = free_port()
            argv = [os.path.join(self.bindir, "postgres"), "-D", self.data, "-p", str(self.port)]
            for s in settings:
                argv += ["-c", s]
            self.proc = Proc("postgres", argv, os.path.join(self.tmp, "postgres.log"),
                             stop_signal=signal.SIGINT, **self.kw)  # SIGINT: fast shutdown
            if self.ready(30):
                return
            self.proc.stop()
            tail = self.proc.log_tail()
            if "could not bind" not in tail and "in use" not in tail:
                break
        raise Failure("postgres did not start:\n" + self.proc.log_tail())

    def ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.proc.alive():
                return False
            r = subprocess.run([os.path.join(self.bindir, "pg_isready"), "-q", "-h", "127.0.0.1",
                                "-p", str(self.port), "-t", "2"], timeout=10)
            if r.returncode == 0:
                return True
            time.sleep(0.1)
        return False

    def createdb(self, name):
        p = subprocess.run([os.path.join(self.bindir, "createdb"), "-h", "127.0.0.1", "-p",
                            str(self.port), "-U", "latch", name], capture_output=True, text=True,
                           timeout=60)
        if p.returncode != 0:
            raise Failure("createdb %s failed: %s" % (name, p.stderr.strip()))

    def conninfo(self, db):
        return "host=127.0.0.1 port=%d dbname=%s user=latch" % (self.port, db)

    def cpu(self):
        return proc_cpu_jiffies(self.proc.pid, children_of=True) if self.proc else 0

    def stop(self):
        if self.proc:
            self.proc.stop(timeout=15)


def start_lock_server(kind, argv_for_port, log_dir):
    for _ in range(3):
        port = free_port()
        p = Proc(kind, argv_for_port(port), os.path.join(log_dir, kind + ".log"))
        if wait_port(port, p):
            p.port = port
            return p
        p.stop()
    raise Failure("%s did not start (log: %s):\n%s" % (kind, p.log_path, p.log_tail()))


def start_service(binary, name, conninfo, lock_url, log_dir, timeout=30.0):
    """latch-reservation --port 0; its URL is the 'listening on' line it prints."""
    p = Proc(name, [binary, "--pg", conninfo, "--lock-url", lock_url, "--bind", "127.0.0.1",
                    "--port", "0"], os.path.join(log_dir, name + ".log"), stdout_pipe=True)
    lines = []

    def read():  # drains stdout for the life of the process
        for line in p.proc.stdout:
            lines.append(line.decode(errors="replace").strip())
    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in lines:
            if line.startswith("listening on http://"):
                p.port = int(line.rsplit(":", 1)[1])
                if health(p.port):
                    return p
        if not p.alive():
            break
        time.sleep(0.05)
    p.stop()
    raise Failure("%s did not start (log: %s):\n%s" % (name, p.log_path, p.log_tail()))


def health(port, timeout=10.0):
    import http.client
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                c.close()
                return True
            c.close()
        except OSError:
            pass
        time.sleep(0.1)
    return False


# ---------------------------------------------------------------- HTTP/1.1 client (asyncio)

class HttpError(Exception):
    pass


class Conn:
    """One keep-alive HTTP/1.1 connection; reopened after an error or `Connection: close`."""

    def __init__(self, port):
        self.port = port
        self.r = self.w = None

    async def close(self):
        if self.w:
            self.w.close()
            try:
                await self.w.wait_closed()
            except OSError:
                pass
        self.r = self.w = None

    async def open(self):
        if self.w is None:
            self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)

    async def request(self, method, path, body=None, headers=(), timeout=30.0):
        """(status, body bytes). Raises HttpError / OSError / TimeoutError on failure."""
        data = b"" if body is None else json.dumps(body).encode()
        head = ["%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n"
                % (method, path, len(data))]
        if data:
            head.append("Content-Type: application/json\r\n")
        for k, v in headers:
            head.append("%s: %s\r\n" % (k, v))
        head.append("\r\n")
        try:
            async with asyncio.timeout(timeout):
                await self.open()
                self.w.write("".join(head).encode() + data)
                raw = await self.r.readuntil(b"\r\n\r\n")
                lines = raw.decode("latin-1").split("\r\n")
                status = int(lines[0].split(" ", 2)[1])
                length, chunked, close = None, False, False
                for line in lines[1:]:
                    k, _, v = line.partition(":")
                    k = k.strip().lower()
                    if k == "content-length":
                        length = int(v)
                    elif k == "transfer-encoding" and "chunked" in v.lower():
                        chunked = True
                    elif k == "connection" and "close" in v.lower():
                        close = True
                if chunked:
                    parts = []
                    for _ in range(100000):
                        n = int((await self.r.readline()).split(b";")[0], 16)
                        chunk = await self.r.readexactly(n + 2)
                        if n == 0:
                            break
                        parts.append(chunk[:-2])
                    payload = b"".join(parts)
                elif length is not None:
                    payload = await self.r.readexactly(length)
                else:
                    payload = await self.r.read()
                    close = True
        except BaseException:
            await self.close()
            raise
        if close:
            await self.close()
        return status, payload


# What a failed request can raise: counted as an error, never fatal to the run.
TRANSPORT = (OSError, HttpError, asyncio.TimeoutError, asyncio.IncompleteReadError,
             asyncio.LimitOverrunError, ValueError)


def error_code(payload):
    try:
        return json.loads(payload).get("error", "?")
    except (ValueError, AttributeError):
        return "?"


def percentile(sorted_values, q):
    if not sorted_values:
        return None
    i = math.ceil(q / 100.0 * len(sorted_values)) - 1  # nearest rank
    return sorted_values[min(len(sorted_values) - 1, max(0, i))]


async def create_event(port, name, seats, timeout=120.0):
    c = Conn(port)
    try:
        t0 = time.monotonic()
        status, payload = await c.request("POST", "/events", {"name": name, "seats": seats},
                                          timeout=timeout)
        elapsed = time.monotonic() - t0
    finally:
        await c.close()
    if status != 201:
        raise Failure("POST /events (%d seats) answered %d: %s" % (seats, status, payload[:300]))
    event = json.loads(payload)
    if event.get("seats") != seats or event.get("available") != seats:
        raise Failure("POST /events (%d seats) answered %s" % (seats, payload[:300]))
    return event["id"], elapsed


# ---------------------------------------------------------------- scenarios

async def mixed_load(ctx, svc, users, seconds, warmup, seats, tag):
    """users virtual users, closed loop, 80 % reads / 20 % writes, for warmup + seconds."""
    event, _ = await create_event(svc.port, "mixed " + tag, seats)
    loop_start = time.monotonic()
    t_start = loop_start + warmup
    t_end = t_start + seconds
    latencies = []
    by_kind = collections.defaultdict(list)  # latencies per kind of request
    kinds = collections.Counter()      # requests per kind, measured window
    statuses = collections.Counter()   # "kind status[/error]" over the measured window
    conflicts = collections.Counter()  # 409 error codes
    errors = collections.Counter()     # 5xx and transport failures
    unexpected = collections.Counter()  # other statuses (400, 404, 422): a bug somewhere
    first_error = []
    cpu = {}

    def sample(tag_):
        cpu[tag_] = {"postgres": ctx.pg.cpu(), "service": proc_cpu_jiffies(svc.pid),
                     "lock_server": proc_cpu_jiffies(ctx.lock[svc.backend].pid),
                     "client": sum(os.times()[:2]) * ctx.hz, "machine": machine_busy_jiffies(),
                     "ours": ctx.our_jiffies(), "t": time.monotonic()}

    async def sampler():
        await asyncio.sleep(max(0.0, t_start - time.monotonic()))
        sample("start")
        await asyncio.sleep(max(0.0, t_end - time.monotonic()))
        sample("end")

    async def vu(i):
        rng = random.Random("%s-%d" % (tag, i))
        conn = Conn(svc.port)
        known = []          # available seats from this user's last listing
        pending = []        # own held reservations, to confirm or cancel later
        available = seats
        n = 0
        for _ in range(10_000_000):  # bounded; the clock ends it long before
            now = time.monotonic()
            if now >= t_end:
                break
            n += 1
            if rng.random() < 0.8:
                if rng.random() < 0.5:
                    kind, method, body, hdr = "read_event", "GET", None, ()
                    path = "/events/%d" % event
                else:
                    off = rng.randrange(0, max(1, available - 100))
                    kind, method, body, hdr = "read_seats", "GET", None, ()
                    path = "/events/%d/seats?offset=%d&limit=100" % (event, off)
            elif pending:
                rid = pending.pop()
                kind = "confirm" if rng.random() < 0.5 else "cancel"
                method, path, body, hdr = "POST", "/reservations/%d/%s" % (rid, kind), None, ()
            else:
                seat = known.pop(rng.randrange(len(known))) if known else rng.randint(1, seats)
                kind, method, path = "reserve", "POST", "/events/%d/reservations" % event
                body = {"user": "vu%d" % i, "seats": [seat]}
                hdr = (("Idempotency-Key", "%s-%d-%d" % (tag, i, n)),)
            t0 = time.monotonic()
            try:
                status, payload = await conn.request(method, path, body, hdr, timeout=30.0)
            except TRANSPORT as e:
                if t0 >= t_start:
                    errors[kind + " " + type(e).__name__] += 1
                    if not first_error:
                        first_error.append("%s %s: %r" % (method, path, e))
                await asyncio.sleep(0.05)
                continue
            t1 = time.monotonic()
            measured = t_start <= t0 and t1 <= t_end + 30
            if status == 200 and kind == "read_seats":
                page = json.loads(payload)
                known = page["seats"]
                available = page["available"]
            elif status == 201 and kind == "reserve" and rng.random() < 0.5:
                pending.append(json.loads(payload)["id"])
            if not measured:
                continue
            latencies.append(t1 - t0)
            by_kind[kind].append(t1 - t0)
            kinds[kind] += 1
            if status == 409:
                code = error_code(payload)
                conflicts[kind + " " + code] += 1
                statuses["%s 409/%s" % (kind, code)] += 1
            else:
                statuses["%s %d" % (kind, status)] += 1
                if status >= 500:
                    errors["%s %d" % (kind, status)] += 1
                    if not first_error:
                        first_error.append("%s %s -> %d %s" % (method, path, status, payload[:200]))
                elif status not in (200, 201):
                    unexpected["%s %d" % (kind, status)] += 1
                    if not first_error:
                        first_error.append("%s %s -> %d %s" % (method, path, status, payload[:200]))
        await conn.close()

    async with asyncio.timeout(warmup + seconds + 90):
        await asyncio.gather(sampler(), *(vu(i) for i in range(users)))
    lat = sorted(latencies)
    window = cpu["end"]["t"] - cpu["start"]["t"]
    n = len(lat)
    hz = ctx.hz
    d = {k: cpu["end"][k] - cpu["start"][k] for k in cpu["end"]}
    per_req = {k: 1000.0 * d[k] / hz / n if n else None
               for k in ("postgres", "service", "lock_server", "client")}
    ours_in_window = d["ours"] + d["client"]
    return {
        "requests": n, "seconds": window, "rps": n / window if window else 0.0,
        "p50_ms": 1000 * percentile(lat, 50) if lat else None,
        "p95_ms": 1000 * percentile(lat, 95) if lat else None,
        "p99_ms": 1000 * percentile(lat, 99) if lat else None,
        "max_ms": 1000 * lat[-1] if lat else None,
        "errors": sum(errors.values()), "errors_by_kind": dict(errors),
        "conflicts_409": sum(conflicts.values()), "conflicts_by_code": dict(conflicts),
        "unexpected": sum(unexpected.values()), "unexpected_by_kind": dict(unexpected),
        "first_error": first_error[0] if first_error else None,
        "requests_by_kind": dict(kinds), "statuses": dict(statuses),
        "cpu_ms_per_request": per_req,
        # cores busy on average: ours vs the rest of the machine (the other engineer's work)
        "cores_busy_ours": ours_in_window / hz / window if window else None,
        "cores_busy_other": max(0.0, d["machine"] - ours_in_window) / hz / window
        if window else None,
        "latency_ms_by_kind": {k: {"p50": 1000 * percentile(sorted(v), 50),
                                   "p99": 1000 * percentile(sorted(v), 99), "n": len(v)}
                               for k, v in by_kind.items()},
        "users": users, "event": event,
    }


async def one_seat(ports, users, tag):
    """users requests for seat 1 of a fresh event at once, round-robin over ports."""
    event, _ = await create_event(ports[0], "one seat " + tag, 10)
    # Warm every instance up first (its PostgreSQL pool opens lazily): the scenario is a
    # stampede on running instances, not on cold ones.
    async def touch(port):
        c = Conn(port)
        try:
            await c.request("GET", "/events/%d" % event, timeout=30.0)
        finally:
            await c.close()
    async with asyncio.timeout(60):
        await asyncio.gather(*(touch(p) for p in ports for _ in range(10)))
    conns = [Conn(ports[i % len(ports)]) for i in range(users)]
    async with asyncio.timeout(60):
        await asyncio.gather(*(c.open() for c in conns))  # connected before the start signal
    go = asyncio.Event()
    outcome = collections.Counter()
    first_error = []

    async def user(i, c):
        await go.wait()
        try:
            status, payload = await c.request("POST", "/events/%d/reservations" % event,
                                              {"user": "u%d" % i, "seats": [1]},
                                              (("Idempotency-Key", "%s-%d" % (tag, i)),), 30.0)
        except TRANSPORT as e:
            outcome["error " + type(e).__name__] += 1
            first_error.append(repr(e))
            return
        if status == 409:
            outcome["409 " + error_code(payload)] += 1
        else:
            outcome[str(status)] += 1
            if status != 201:
                first_error.append("%d %s" % (status, payload[:200]))
        await c.close()

    tasks = [asyncio.ensure_future(user(i, c)) for i, c in enumerate(conns)]
    await asyncio.sleep(0.05)
    t0 = time.monotonic()
    go.set()
    async with asyncio.timeout(60):
        await asyncio.gather(*tasks)
    elapsed = time.monotonic() - t0
    # The seat itself: exactly one holder in the database, seen through the API.
    c = Conn(ports[0])
    status, payload = await c.request("GET", "/events/%d" % event)
    await c.close()
    available = json.loads(payload).get("available") if status == 200 else None
    ok201 = outcome.get("201", 0)
    n409 = sum(v for k, v in outcome.items() if k.startswith("409"))
    return {"users": users, "instances": len(ports), "successes": ok201, "conflicts_409": n409,
            "outcomes": dict(outcome), "ms": 1000 * elapsed, "available_after": available,
            "ok": ok201 == 1 and n409 == users - 1 and available == 9,
            "first_error": first_error[0] if first_error else None}


async def many_seats(port, bookings, in_flight, tag):
    """bookings reservations of different seats (one each), in_flight at a time: all 201."""
    event, _ = await create_event(port, "many seats " + tag, bookings)
    queue = collections.deque(range(1, bookings + 1))
    outcome = collections.Counter()
    latencies = []
    first_error = []

    async def worker():
        c = Conn(port)
        for _ in range(bookings):
            if not queue:
                break
            seat = queue.popleft()
            t0 = time.monotonic()
            try:
                status, payload = await c.request(
                    "POST", "/events/%d/reservations" % event,
                    {"user": "u%d" % seat, "seats": [seat]},
                    (("Idempotency-Key", "%s-%d" % (tag, seat)),), 30.0)
            except TRANSPORT as e:
                outcome["error " + type(e).__name__] += 1
                first_error.append(repr(e))
                continue
            latencies.append(time.monotonic() - t0)
            outcome[str(status) if status != 409 else "409 " + error_code(payload)] += 1
            if status != 201:
                first_error.append("seat %d: %d %s" % (seat, status, payload[:200]))
        await c.close()

    t0 = time.monotonic()
    async with asyncio.timeout(120):
        await asyncio.gather(*(worker() for _ in range(in_flight)))
    elapsed = time.monotonic() - t0
    c = Conn(port)
    status, payload = await c.request("GET", "/events/%d" % event)
    await c.close()
    available = json.loads(payload).get("available") if status == 200 else None
    lat = sorted(latencies)
    ok = outcome.get("201", 0)
    return {"bookings": bookings, "in_flight": in_flight, "successes": ok,
            "failures": bookings - ok, "outcomes": dict(outcome), "seconds": elapsed,
            "bookings_per_s": bookings / elapsed, "p50_ms": 1000 * percentile(lat, 50),
            "p99_ms": 1000 * percentile(lat, 99), "available_after": available,
            "ok": ok == bookings and available == 0,
            "first_error": first_error[0] if first_error else None}


async def bulk(port, seats, tag):
    event, elapsed = await create_event(port, "bulk " + tag, seats)
    return {"seats": seats, "seconds": elapsed, "seats_per_s": seats / elapsed, "event": event,
            "ok": True}


# ---------------------------------------------------------------- the run

class Ctx:
    pass


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(runs, key):
    """Median over rounds of latch/Redis (rounds paired by index)."""
    a, b = runs.get("latch", []), runs.get("redis", [])
    rs = [x[key] / y[key] for x, y in zip(a, b)
          if x.get(key) is not None and y.get(key)]
    return statistics.median(rs) if rs else None


def fmt(v, spec="%.0f"):
    return "-" if v is None else spec % v


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": platform.release(),
            "python": platform.python_version()}


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def markdown(report):
    m = report["machine"]
    s = report["scenarios"]
    lines = [
        "Run %s (%s mode, %d rounds, order alternating %s), %d CPUs (%s), kernel %s; "
        "1-min load average %.2f at start, %.2f at end. PostgreSQL %s with %s, redis-server %s, "
        "latchd (this tree, `--port P --bind 127.0.0.1`), latch-reservation defaults "
        "(--workers 16 --pg-pool 10, lock TTL 5 s, no lock wait). Client: this script, one "
        "asyncio thread on the same machine. Values are medians over rounds; latch/Redis is "
        "the median of the per-round ratios. Took %.0f s."
        % (report["date"], report["mode"], report["rounds"],
           "Redis, latchd / latchd, Redis", m["nproc"], m["cpu"], m["kernel"],
           report["load_start"][0], report["load_end"][0], report["postgres_version"],
           "its durable defaults (fsync on)" if report["pg_durable"]
           else "fsync=off synchronous_commit=off full_page_writes=off", report["redis_version"],
           report["seconds"]),
    ]
    mx = s.get("mixed")
    if mx:
        lines += ["", "**Mixed load**: %d virtual users, closed loop, %d s measured after %d s "
                  "warm-up, 80 %% reads (GET event, list 100 available seats) / 20 %% writes "
                  "(reserve 1 seat with an Idempotency-Key; half of the holds later confirmed "
                  "or cancelled), on a fresh %d-seat event per run. CPU = ms of CPU time per "
                  "request (utime+stime from /proc) of each component; `other` = cores busy "
                  "outside this benchmark (the machine is shared)." % (
                      report["mixed_users"], report["mixed_seconds"], report["mixed_warmup"],
                      report["mixed_seats"]), "",
                  "| lock server | req/s | p50 ms | p95 ms | p99 ms | errors | 409 | "
                  "CPU PostgreSQL | CPU service | CPU lock server | CPU client | other cores |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for b in BACKENDS:
            runs = mx[b]
            cpu = lambda k: median([r["cpu_ms_per_request"][k] for r in runs])
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                LABEL[b], fmt(median([r["rps"] for r in runs])),
                fmt(median([r["p50_ms"] for r in runs]), "%.1f"),
                fmt(median([r["p95_ms"] for r in runs]), "%.1f"),
                fmt(median([r["p99_ms"] for r in runs]), "%.1f"),
                "+".join(str(r["errors"] + r["unexpected"]) for r in runs),
                fmt(median([r["conflicts_409"] for r in runs])),
                fmt(cpu("postgres"), "%.3f"), fmt(cpu("service"), "%.3f"),
                fmt(cpu("lock_server"), "%.3f"), fmt(cpu("client"), "%.3f"),
                fmt(median([r["cores_busy_other"] for r in runs]), "%.2f")))
        lines.append("| **latch/Redis** | **%s** | %s | %s | %s | | | | | %s | | |" % (
            fmt(ratio(mx, "rps"), "%.2fx"), fmt(ratio(mx, "p50_ms"), "%.2fx"),
            fmt(ratio(mx, "p95_ms"), "%.2fx"), fmt(ratio(mx, "p99_ms"), "%.2fx"),
            fmt(ratio_cpu(mx, "lock_server"), "%.2fx")))
        def kind_ms(b, kind, q):
            return median([r["latency_ms_by_kind"].get(kind, {}).get(q) for r in mx[b]])
        kinds = (("reserve", "reserve (takes the seat lock)"), ("confirm", "confirm"),
                 ("cancel", "cancel"), ("read_event", "GET event"),
                 ("read_seats", "list seats"))
        lines += ["", "Latency by kind of request in the mixed load, p50 / p99 ms (median over "
                  "rounds); only reserve touches the lock server:", "",
                  "| lock server | " + " | ".join(k[1] for k in kinds) + " |",
                  "|---|" + "---:|" * len(kinds)]
        for b in BACKENDS:
            lines.append("| %s | %s |" % (LABEL[b], " | ".join(
                "%s / %s" % (fmt(kind_ms(b, k, "p50"), "%.1f"), fmt(kind_ms(b, k, "p99"), "%.1f"))
                for k, _ in kinds)))
        lines += ["", "Per round (rps): " + "; ".join(
            "%s %s" % (LABEL[b], ", ".join(fmt(r["rps"]) for r in mx[b])) for b in BACKENDS)
            + ". 409s by code (all rounds): " + "; ".join(
            "%s %s" % (LABEL[b], codes(mx[b], "conflicts_by_code")) for b in BACKENDS) + "."]
    for key, title in (("one_seat", "**50 users on one seat**, at once, one instance"),
                       ("three_instances", "**3 instances, 100 users on one seat**, spread "
                        "round-robin (all on the same lock server and database)")):
        sc = s.get(key)
        if not sc:
            continue
        lines += ["", title + ": exactly one 201 expected.", "",
                  "| lock server | 201 per round | 409 per round | 409 codes (all rounds) | "
                  "time ms (median) | check |", "|---|---|---|---|---:|---|"]
        for b in BACKENDS:
            runs = sc[b]
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                LABEL[b], ", ".join(str(r["successes"]) for r in runs),
                ", ".join(str(r["conflicts_409"]) for r in runs), codes(runs, "outcomes", "409 "),
                fmt(median([r["ms"] for r in runs]), "%.1f"),
                "ok" if all(r["ok"] for r in runs) else "**FAILED**"))
        lines.append("| **latch/Redis** | | | | %s | |" % fmt(ratio(sc, "ms"), "%.2fx"))
    ms = s.get("many_seats")
    if ms:
        lines += ["", "**%d bookings of different seats**, %d in flight, one instance: all 201 "
                  "expected." % (report["bookings"], report["in_flight"]), "",
                  "| lock server | 201 per round | time s | bookings/s | p50 ms | p99 ms | check |",
                  "|---|---|---:|---:|---:|---:|---|"]
        for b in BACKENDS:
            runs = ms[b]
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                LABEL[b], ", ".join(str(r["successes"]) for r in runs),
                fmt(median([r["seconds"] for r in runs]), "%.2f"),
                fmt(median([r["bookings_per_s"] for r in runs])),
                fmt(median([r["p50_ms"] for r in runs]), "%.1f"),
                fmt(median([r["p99_ms"] for r in runs]), "%.1f"),
                "ok" if all(r["ok"] for r in runs) else "**FAILED**"))
        lines.append("| **latch/Redis** | | %s | %s | %s | %s | |" % (
            fmt(ratio(ms, "seconds"), "%.2fx"), fmt(ratio(ms, "bookings_per_s"), "%.2fx"),
            fmt(ratio(ms, "p50_ms"), "%.2fx"), fmt(ratio(ms, "p99_ms"), "%.2fx")))
    bk = s.get("bulk")
    if bk:
        lines += ["", "**Bulk create of %d seats** (one POST /events; the lock server is not "
                  "involved: a control)." % report["bulk_seats"], "",
                  "| lock server | seats/s | time s |", "|---|---:|---:|"]
        for b in BACKENDS:
            runs = bk[b]
            lines.append("| %s | %s | %s |" % (
                LABEL[b], fmt(median([r["seats_per_s"] for r in runs])),
                fmt(median([r["seconds"] for r in runs]), "%.2f")))
        lines.append("| **latch/Redis** | %s | |" % fmt(ratio(bk, "seats_per_s"), "%.2fx"))
    lines += ["", "Correctness: %s." % ("all checks passed" if not report["failures"]
                                        else "FAILED: " + "; ".join(report["failures"]))]
    return "\n".join(lines) + "\n"


def ratio_cpu(mx, key):
    rs = [x["cpu_ms_per_request"][key] / y["cpu_ms_per_request"][key]
          for x, y in zip(mx["latch"], mx["redis"])
          if x["cpu_ms_per_request"][key] is not None and y["cpu_ms_per_request"][key]]
    return statistics.median(rs) if rs else None


def codes(runs, field, prefix=""):
    total = collections.Counter()
    for r in runs:
        for k, v in r[field].items():
            if k.startswith(prefix):
                total[k[len(prefix):].split(" ")[-1]] += v
    return ", ".join("%s %d" % (k, v) for k, v in sorted(total.items())) or "-"


def check(report, name, backend, rnd, r):
    problems = []
    if name == "mixed":
        if r["errors"] or r["unexpected"]:
            problems.append("%d errors, %d unexpected statuses (first: %s)"
                            % (r["errors"], r["unexpected"], r["first_error"]))
        if not r["requests"]:
            problems.append("no request completed")
    elif not r["ok"]:
        problems.append("%s (first error: %s)" % (
            {"one_seat": "%d successes, %d x 409 of %s users, %s seats left"
             % (r.get("successes", 0), r.get("conflicts_409", 0), r.get("users"),
                r.get("available_after")),
             "three_instances": "%d successes, %d x 409 of %s users, %s seats left"
             % (r.get("successes", 0), r.get("conflicts_409", 0), r.get("users"),
                r.get("available_after")),
             "many_seats": "%s of %s bookings succeeded, %s seats left"
             % (r.get("successes"), r.get("bookings"), r.get("available_after")),
             }.get(name, "failed"), r.get("first_error")))
    for p in problems:
        msg = "%s on %s, round %d: %s" % (name, LABEL[backend], rnd + 1, p)
        report["failures"].append(msg)
        print("CHECK FAILED: " + msg, flush=True)


def summary_line(name, r):
    if name == "mixed":
        return "%.0f req/s p50 %.1f p95 %.1f p99 %.1f ms, %d errors, %d x 409" % (
            r["rps"], r["p50_ms"] or 0, r["p95_ms"] or 0, r["p99_ms"] or 0,
            r["errors"] + r["unexpected"], r["conflicts_409"])
    if name in ("one_seat", "three_instances"):
        return "%d x 201, %d x 409 (%s) in %.1f ms" % (r["successes"], r["conflicts_409"],
                                                       r["outcomes"], r["ms"])
    if name == "many_seats":
        return "%d/%d x 201 in %.2f s (%.0f/s)" % (r["successes"], r["bookings"], r["seconds"],
                                                   r["bookings_per_s"])
    return "%d seats in %.2f s (%.0f seats/s)" % (r["seats"], r["seconds"], r["seats_per_s"])


def run_scenarios(ctx, args, report):
    s = report["scenarios"]
    stamp = datetime.datetime.now().strftime("%H%M%S")

    def rounds_of(name, fn):
        s[name] = {b: [] for b in BACKENDS}
        for rnd in range(args.rounds):
            order = BACKENDS if rnd % 2 == 0 else tuple(reversed(BACKENDS))
            for b in order:
                tag = "%s-%s-%s-r%d" % (stamp, name, b, rnd)
                r = fn(b, tag)
                r["round"] = rnd + 1
                s[name][b].append(r)
                print("  %-16s %-6s round %d: %s" % (name, LABEL[b], rnd + 1,
                                                     summary_line(name, r)), flush=True)
                check(report, name, b, rnd, r)

    def mixed(b, tag):
        return asyncio.run(mixed_load(ctx, ctx.svc[b], args.users, args.seconds, args.warmup,
                                      args.seats, tag))

    def one(b, tag):
        return asyncio.run(one_seat([ctx.svc[b].port], 50, tag))

    def three(b, tag):
        extra = []
        try:
            for k in range(2):
                extra.append(start_service(args.service_bin, "service-%s-extra%d" % (b, k + 1),
                                           ctx.pg.conninfo(ctx.db[b]), ctx.url[b], ctx.log_dir))
            ports = [ctx.svc[b].port] + [p.port for p in extra]
            return asyncio.run(one_seat(ports, 100, tag))
        finally:
            for p in extra:
                p.stop()

    def many(b, tag):
        return asyncio.run(many_seats(ctx.svc[b].port, args.bookings, args.in_flight, tag))

    def blk(b, tag):
        return asyncio.run(bulk(ctx.svc[b].port, args.bulk_seats, tag))

    print("mixed load: %d users, %d s (+%d s warm-up) per run" % (args.users, args.seconds,
                                                                  args.warmup), flush=True)
    rounds_of("mixed", mixed)
    rounds_of("one_seat", one)
    rounds_of("three_instances", three)
    rounds_of("many_seats", many)
    rounds_of("bulk", blk)


def build(args):
    if args.no_build:
        return
    if not os.path.exists(os.path.join(args.build_dir, "CMakeCache.txt")):
        # -Wno-restrict: GCC 12 reports a false -Wrestrict in std::string operator+ at -O2.
        subprocess.run(["cmake", "-S", ROOT, "-B", args.build_dir, "-DCMAKE_BUILD_TYPE=Release",
                        "-DLATCH_BUILD_TESTS=OFF", "-DLATCH_BUILD_BENCH=OFF",
                        "-DCMAKE_CXX_FLAGS=-Wno-restrict"], check=True, timeout=600)
    subprocess.run(["cmake", "--build", args.build_dir, "-j2", "--target", "latchd",
                    "latch-reservation"], check=True, timeout=3600)


def find_pg_bindir(wanted):
    base = "/usr/lib/postgresql"
    versions = sorted((d for d in (os.listdir(base) if os.path.isdir(base) else [])
                       if d.isdigit()), key=int)
    if wanted and wanted in versions:
        return os.path.join(base, wanted, "bin")
    if versions:
        return os.path.join(base, versions[-1], "bin")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="under 2 minutes: 2 rounds, 50 users, 8 s")
    ap.add_argument("--rounds", type=int, help="rounds per scenario (2 quick, 3 default)")
    ap.add_argument("--users", type=int, help="mixed-load virtual users (50 quick, 200 default)")
    ap.add_argument("--seconds", type=int, help="mixed-load measured seconds (8 quick, 20 default)")
    ap.add_argument("--seats", type=int, default=5000,
                    help="seats of the mixed-load event (default 5000; reads count and list the "
                         "available ones, so their cost grows with it)")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-load"),
                    help="Release build tree with latchd and latch-reservation "
                         "(default build-load)")
    ap.add_argument("--no-build", action="store_true", help="use the binaries in --build-dir")
    ap.add_argument("--pg-fast", action="store_true",
                    help="fsync=off synchronous_commit=off full_page_writes=off (as the demo's "
                         "tests); default: PostgreSQL's durable defaults")
    ap.add_argument("--pg-version", default="15", help="PostgreSQL major version to use (15)")
    args = ap.parse_args()
    quick = args.quick
    args.rounds = args.rounds or (2 if quick else 3)
    args.users = args.users or (50 if quick else 200)
    args.seconds = args.seconds or (8 if quick else 20)
    args.warmup = 1 if quick else 2
    args.bookings, args.in_flight, args.bulk_seats = 1000, 50, 100000
    args.build_dir = os.path.abspath(args.build_dir)

    pg_bindir = find_pg_bindir(args.pg_version)
    if not pg_bindir or not os.access(os.path.join(pg_bindir, "initdb"), os.X_OK):
        sys.exit("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin "
                 "(apt-get install postgresql)")
    for tool in ("postgres", "pg_isready", "createdb"):
        if not os.access(os.path.join(pg_bindir, tool), os.X_OK):
            sys.exit("missing %s in %s (apt-get install postgresql)" % (tool, pg_bindir))
    if not shutil.which("redis-server"):
        sys.exit("needs redis-server (apt-get install redis-server)")
    build(args)
    args.latchd = os.path.join(args.build_dir, "server", "latchd")
    args.service_bin = os.path.join(args.build_dir, "demo", "reservation", "latch-reservation")
    for path in (args.latchd, args.service_bin):
        if not os.access(path, os.X_OK):
            sys.exit("missing %s (build it: cmake --build %s -j2 --target latchd "
                     "latch-reservation, or drop --no-build)" % (path, args.build_dir))

    # Ctrl-C and SIGTERM both unwind through the finally below.
    def on_term(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_term)

    report = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
              "mode": "quick" if quick else "default", "rounds": args.rounds,
              "machine": machine(), "load_start": loadavg(), "pg_durable": not args.pg_fast,
              "mixed_users": args.users, "mixed_seconds": args.seconds,
              "mixed_warmup": args.warmup, "mixed_seats": args.seats, "bookings": args.bookings,
              "in_flight": args.in_flight, "bulk_seats": args.bulk_seats, "scenarios": {},
              "failures": []}
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="latch-demo-load-")
    ctx = Ctx()
    ctx.hz = os.sysconf("SC_CLK_TCK")
    ctx.log_dir = tmp
    ctx.pg = None
    procs = []
    interrupted = False
    try:
        kw = as_postgres_kwargs()
        if kw:
            os.chown(tmp, kw["user"], kw["group"])
        os.chmod(tmp, 0o755)
        ctx.pg = Postgres(pg_bindir, tmp, durable=not args.pg_fast)
        ctx.pg.start()
        report["postgres_version"] = subprocess.run(
            [os.path.join(pg_bindir, "postgres"), "--version"], capture_output=True, text=True,
            timeout=10).stdout.split()[2]
        ctx.db = {b: "tickets_" + b for b in BACKENDS}
        for db in ctx.db.values():
            ctx.pg.createdb(db)
        print("PostgreSQL %s on 127.0.0.1:%d (%s)" % (report["postgres_version"], ctx.pg.port,
                                                     tmp), flush=True)
        ctx.lock = {
            "redis": start_lock_server("redis", lambda p: [
                "redis-server", "--port", str(p), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no"], tmp),
            "latch": start_lock_server("latchd", lambda p: [
                args.latchd, "--port", str(p), "--bind", "127.0.0.1"], tmp),
        }
        procs += list(ctx.lock.values())
        report["redis_version"] = subprocess.run(
            ["redis-server", "--version"], capture_output=True, text=True,
            timeout=10).stdout.split("v=")[-1].split()[0]
        ctx.url = {b: "redis://127.0.0.1:%d" % ctx.lock[b].port for b in BACKENDS}
        ctx.svc = {}
        for b in BACKENDS:
            ctx.svc[b] = start_service(args.service_bin, "service-" + b,
                                       ctx.pg.conninfo(ctx.db[b]), ctx.url[b], tmp)
            ctx.svc[b].backend = b
            procs.append(ctx.svc[b])
            print("%s: lock server %s, service http://127.0.0.1:%d, database %s" % (
                LABEL[b], ctx.url[b], ctx.svc[b].port, ctx.db[b]), flush=True)
        ctx.our_jiffies = lambda: ctx.pg.cpu() + sum(proc_cpu_jiffies(p.pid) for p in procs)
        run_scenarios(ctx, args, report)
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: stopping everything", file=sys.stderr)
    except Failure as e:
        print("error: %s" % e, file=sys.stderr)
        report["failures"].append("setup: %s" % str(e).splitlines()[0])
        interrupted = True
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not skip cleanup
        for p in reversed(procs):
            p.stop()
        if ctx.pg:
            ctx.pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if interrupted:
        sys.exit(130 if not report["failures"] else 2)
    report["seconds"] = time.monotonic() - started
    report["load_end"] = loadavg()
    table = markdown(report)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "demo_load.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(RESULTS, "demo_load.md"), "w") as f:
        f.write(table)
    print()
    print(table)
    print("done in %.0f s; results in %s" % (report["seconds"], RESULTS))
    sys.exit(1 if report["failures"] else 0)


if __name__ == "__main__":
    main()
