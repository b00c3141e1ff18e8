"""The scenarios of the Go service the demo grew from, against one service (or three).

vu_load is both the seed's load (virtual users paced to offer a rate: a think time between
requests, as the seed's load tool runs them) and the capacity figure (pace None: a closed loop
without pause, which saturates the machine)."""

import asyncio
import collections
import json
import os
import random
import statistics
import time

from benchkit.http import TRANSPORT, Conn, error_code
from benchkit.procs import machine_busy_jiffies, proc_cpu_jiffies
from benchkit.stats import percentile

from .mix import MIX, REQUESTS, fill
from .services import create_event


async def vu_load(ctx, svc, users, seconds, warmup, seats, tag, pace=None):
    """users virtual users, 80 % reads / 20 % writes, for warmup + seconds. pace None: a
    closed loop (each user sends its next request when the last is answered); else each user
    starts a request every `pace` s on average (uniform 0.5-1.5 x pace, so the users drift
    apart), pausing for what is left of the interval after the answer, never bursting to
    catch up when an answer came late: users / pace is the offered rate."""
    event, _ = await create_event(svc.port, "load " + tag, seats)
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
        n = 0
        next_at = loop_start + (rng.uniform(0, pace) if pace else 0.0)
        for _ in range(10_000_000):  # bounded; the clock ends it long before
            now = time.monotonic()
            if pace and next_at > now:
                await asyncio.sleep(min(next_at, t_end) - now)  # think time
                now = time.monotonic()
            if now >= t_end:
                break
            if pace:
                next_at = max(next_at + pace * rng.uniform(0.5, 1.5), now)
            n += 1
            if rng.random() < MIX["read_share"]:
                if rng.random() < MIX["event_read_share"]:
                    kind, v = "read_event", {}
                else:
                    kind = "read_seats"
                    v = {"after": rng.randrange(0, max(1, seats - MIX["page_limit"])),
                         "limit": MIX["page_limit"]}
            elif pending:
                v = {"id": pending.pop()}
                kind = "confirm" if rng.random() < MIX["confirm_share"] else "cancel"
            else:
                seat = known.pop(rng.randrange(len(known))) if known else rng.randint(1, seats)
                kind, v = "reserve", {"seat": seat, "user": i, "n": n, "tag": tag}
            method, path, body, header = (fill(x, event=event, **v) for x in REQUESTS[kind])
            body = json.loads(body) if body else None
            hdr = (tuple(x.strip() for x in header.split(":", 1)),) if header else ()
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
            elif status == 201 and kind == "reserve" and rng.random() < MIX["keep_hold_share"]:
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
        "users": users, "event": event, "pace_s": pace,
        "offered_rps": users / pace if pace else None,
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


async def bulk(port, seats, tag, counts=20):
    """Creates an event of `seats` seats (one POST), then reads its availability `counts`
    times in a row on one connection (GET /events/{id}): the seed's 100,000-seat figures."""
    event, elapsed = await create_event(port, "bulk " + tag, seats)
    c = Conn(port)
    times = []
    available = None
    try:
        for _ in range(counts):
            t0 = time.monotonic()
            status, payload = await c.request("GET", "/events/%d" % event, timeout=30.0)
            times.append(time.monotonic() - t0)
            if status == 200:
                available = json.loads(payload).get("available")
    finally:
        await c.close()
    return {"seats": seats, "seconds": elapsed, "seats_per_s": seats / elapsed, "event": event,
            "count_ms": 1000 * statistics.median(times), "count_max_ms": 1000 * max(times),
            "counts": counts, "available": available, "ok": available == seats}
