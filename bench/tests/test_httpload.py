"""Checks of bench/loadgen's latch_httpload (the open-loop HTTP generator of demo_load.py
--paced) against small fake services on free loopback ports: its counts add up, a 409 is an
answer and not an error, the seed's mix carries state (pages -> bookings -> confirm/cancel),
latency runs from the scheduled time (a slow server's queue shows), and failures are errors.

Needs the binary: ctest runs it as bench_httpload where the benchmarks are built
(LATCH_BUILD_BENCH=ON), with LATCH_HTTPLOAD=<path>; bench_python_tests (no benchmarks) skips it.
"""

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from demoload.mix import write_scenario  # noqa: E402

BINARY = os.environ.get("LATCH_HTTPLOAD")
PAGE_BASE = 5000  # seats the fake's pages offer: above the event's 1000, so a booking of one
                  # of them can only come from a page


class FakeService:
    """The demo's API on a ThreadingHTTPServer: pages of seats PAGE_BASE+..., every second
    reservation refused with 409 lock_busy, confirm/cancel 200. slow_s: each request holds one
    shared lock this long (one request at a time); fail_reserve: 500 for reservations;
    hang_reads: GET /events/{id} never answers (until stop)."""

    def __init__(self, slow_s=0.0, fail_reserve=False, hang_reads=False):
        svc = self
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.reserved, self.confirmed = [], 0
        self.reservations = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def reply(self, status, obj):
                data = json.dumps(obj, separators=(",", ":")).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if slow_s:
                    with svc.lock:
                        svc.release.wait(slow_s)  # the simulated work of one request
                if "/seats" in self.path:
                    after = int(self.path.split("after=")[1].split("&")[0])
                    seats = [PAGE_BASE + after + i for i in range(1, 11)]
                    return self.reply(200, {"event_id": 1, "available": 900, "seats": seats})
                if hang_reads:
                    svc.release.wait(30)
                return self.reply(200, {"id": 1, "name": "e", "seats": 1000, "available": 900})

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if slow_s:
                    with svc.lock:
                        svc.release.wait(slow_s)
                if self.path.endswith("/reservations"):
                    if fail_reserve:
                        return self.reply(500, {"error": "internal", "message": "boom"})
                    with svc.lock:
                        svc.reservations += 1
                        n = svc.reservations
                        if n % 2 == 0:
                            return self.reply(409, {"error": "lock_busy", "message": "retry"})
                        seat = json.loads(body)["seats"][0]
                        svc.reserved.append(seat)
                    return self.reply(201, {"id": n, "event_id": 1, "seats": [seat],
                                            "status": "held"})
                with svc.lock:
                    svc.confirmed += 1
                return self.reply(200, {"id": 1, "status": "confirmed"})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, address: None  # clients that hang up
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@unittest.skipUnless(BINARY, "LATCH_HTTPLOAD (the latch_httpload binary) not set: run as the "
                     "ctest bench_httpload of a build with LATCH_BUILD_BENCH=ON")
class HttpLoadTest(unittest.TestCase):
    def run_tool(self, port, rate, seconds, users=5, timeout_ms=10000, max_conns=20):
        with tempfile.TemporaryDirectory() as tmp:
            spec = os.path.join(tmp, "scenario.txt")
            write_scenario(spec, users, 1, 1000, "t")
            p = subprocess.run([BINARY, "--port", str(port), "--scenario", spec, "--rate",
                                str(rate), "--seconds", str(seconds), "--warmup-ms", "200",
                                "--timeout-ms", str(timeout_ms), "--connections", "2",
                                "--max-connections", str(max_conns)],
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[:2], ["phase measure-start", "phase measure-end"])
        return json.loads(lines[-1])

    def assert_consistent(self, r):
        self.assertEqual(r["completed"] + r["errors"], r["sent"], r)
        self.assertEqual(r["errors"], r["err_5xx"] + r["err_status"] + r["err_timeout"] +
                         r["err_connect"] + r["err_io"], r)
        kinds = ("read_event", "read_seats", "reserve", "confirm", "cancel")
        self.assertEqual(sum(r[k + "_n"] for k in kinds), r["completed"], r)
        if r["completed"]:
            self.assertGreater(r["p50_ms"], 0, r)
            self.assertTrue(r["p50_ms"] <= r["p95_ms"] <= r["p99_ms"] <= r["max_ms"], r)

    def test_counts_add_up_and_409_is_an_answer(self):
        svc = FakeService()
        try:
            r = self.run_tool(svc.port, 100, 1)
        finally:
            svc.stop()
        # Requests k = 20..119 of 10 ms fall in the window [200 ms, 1200 ms).
        self.assertEqual(r["sent"], 100, r)
        self.assert_consistent(r)
        self.assertEqual(r["errors"], 0, r)
        self.assertGreater(r["conflicts"], 0, r)
        self.assertEqual(r["conflicts"], r.get("c409_lock_busy"), r)
        # The mix carried state: seats of the fake's pages were booked, holds were settled.
        self.assertTrue(any(s > PAGE_BASE for s in svc.reserved), svc.reserved)
        self.assertGreater(r["confirm_n"] + r["cancel_n"], 0, r)
        self.assertAlmostEqual(r["achieved_rps"], 100, delta=5)

    def test_latency_runs_from_the_scheduled_time(self):
        # One request at a time, 30 ms each: at most ~33 req/s for 100 offered. A closed loop
        # would report ~30-60 ms; open loop, the queue's wait is in the latency.
        svc = FakeService(slow_s=0.03)
        try:
            r = self.run_tool(svc.port, 100, 1, max_conns=2)
        finally:
            svc.stop()
        self.assert_consistent(r)
        self.assertEqual(r["errors"], 0, r)
        self.assertEqual(r["sent"], 100, r)
        self.assertGreater(r["p50_ms"], 300, r)
        self.assertGreater(r["max_ms"], 1500, r)
        self.assertLessEqual(r["max_open"], 2, r)
        self.assertLess(r["achieved_rps"], 50, r)  # the server's ~33/s, not the offered 100

    def test_failures_are_errors(self):
        svc = FakeService(fail_reserve=True, hang_reads=True)
        try:
            r = self.run_tool(svc.port, 50, 1, timeout_ms=300)
        finally:
            svc.stop()
        self.assert_consistent(r)
        self.assertEqual(r["sent"], 50, r)
        self.assertGreater(r["err_5xx"], 0, r)
        self.assertGreater(r["err_timeout"], 0, r)
        self.assertTrue(r["first_error"], r)

    def test_no_server_is_connection_errors(self):
        svc = FakeService()
        port = svc.port
        svc.stop()  # the port is now closed: every connect is refused
        r = self.run_tool(port, 50, 0.5)
        self.assert_consistent(r)
        self.assertEqual(r["sent"], 25, r)
        self.assertEqual(r["completed"], 0, r)
        self.assertEqual(r["err_connect"], r["sent"], r)


if __name__ == "__main__":
    unittest.main()
