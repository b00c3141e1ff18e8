"""Starting the lock servers and service instances of a run, and creating events."""

import json
import os
import threading
import time

from benchkit.http import Conn
from benchkit.procs import Failure, Proc, free_port, wait_port


def start_lock_server(kind, argv_for_port, log_dir):
    for _ in range(3):
        port = free_port()
        p = Proc(kind, argv_for_port(port), os.path.join(log_dir, kind + ".log"))
        if wait_port(port, p):
            p.port = port
            return p
        p.stop()
    raise Failure("%s did not start (log: %s):\n%s" % (kind, p.log_path, p.log_tail()))


def start_service(binary, name, conninfo, lock_url, log_dir, timeout=30.0, extra=()):
    """latch-reservation --port 0; its URL is the 'listening on' line it prints."""
    p = Proc(name, [binary, "--pg", conninfo, "--lock-url", lock_url, "--bind", "127.0.0.1",
                    "--port", "0"] + list(extra), os.path.join(log_dir, name + ".log"),
             stdout_pipe=True)
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


