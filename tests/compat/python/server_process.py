"""Runs the server under test as a child process on a free loopback port.

COMPAT_SERVER names the server: "redis" (redis-server from PATH, or REDIS_SERVER) or "latchd"
(the binary named by LATCHD, which ctest sets to the one it built). The same library test then
runs against both, so a difference between them is a failing test.

Contract: ServerProcess.start() returns only once the server answers PING (bounded by
READY_TIMEOUT_S) and raises otherwise, leaving no child behind; stop() always reaps the child.
The child also gets SIGKILL if the test process dies first (PR_SET_PDEATHSIG), so a test
killed by the ctest timeout leaves no server running.

Debugging: with COMPAT_TRAFFIC_LOG=<file>, `port` is that of tools/traffic_proxy.py placed in
front of the server, which logs every byte both ways to the file (latchd has no MONITOR).
"""

import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

READY_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 5.0
START_ATTEMPTS = 3  # a free port can be taken by someone else before the child binds it

_PR_SET_PDEATHSIG = 1
_TRAFFIC_PROXY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                              "traffic_proxy.py")


def free_port():
    """A port that is free on 127.0.0.1 right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _die_with_parent():
    # Runs in the child between fork and exec.
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _answers_ping(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as conn:
            conn.sendall(b"PING\r\n")
            reply = conn.recv(64)
            # -NOAUTH: a server started with --requirepass is up too.
            return reply.startswith(b"+PONG\r\n") or reply.startswith(b"-NOAUTH ")
    except OSError:
        return False


def server_kind():
    kind = os.environ.get("COMPAT_SERVER", "redis")
    if kind not in ("redis", "latchd"):
        raise RuntimeError(f"COMPAT_SERVER must be 'redis' or 'latchd', not {kind!r}")
    return kind


class ServerProcess:
    """One redis-server or latchd child. Use as a context manager or call start()/stop()."""

    def __init__(self, kind=None):
        self.kind = kind or server_kind()
        self.port = None  # what clients connect to (the proxy's port when logging traffic)
        self.server_port = None
        self._child = None
        self._log = None
        self._proxy = None

    def _command(self, port):
        if self.kind == "redis":
            binary = os.environ.get("REDIS_SERVER", "redis-server")
            return [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no"]
        binary = os.environ.get("LATCHD")
        if not binary or not os.access(binary, os.X_OK):
            raise RuntimeError(f"LATCHD must name the latchd binary (got {binary!r})")
        return [binary, "--port", str(port), "--bind", "127.0.0.1"]

    def start(self):
        failures = []
        for _ in range(START_ATTEMPTS):
            port = free_port()
            if self._try_start(port, failures):
                self.server_port = self.port = port
                if os.environ.get("COMPAT_TRAFFIC_LOG"):
                    self._start_proxy(os.environ["COMPAT_TRAFFIC_LOG"])
                return self
        raise RuntimeError(f"{self.kind} did not start:\n" + "\n".join(failures))

    def _try_start(self, port, failures):
        self._log = tempfile.TemporaryFile()
        self._child = subprocess.Popen(self._command(port), stdin=subprocess.DEVNULL,
                                       stdout=self._log, stderr=subprocess.STDOUT,
                                       preexec_fn=_die_with_parent)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._child.poll() is not None:
                break
            if _answers_ping(port):
                return True
            time.sleep(0.05)
        failures.append(f"port {port}: exit status {self._child.poll()}, log:\n{self.log_text()}")
        self.stop()
        return False

    def _start_proxy(self, log_path):
        self._proxy = subprocess.Popen(
            [sys.executable, _TRAFFIC_PROXY, "--target-port", str(self.server_port), "--log",
             log_path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            preexec_fn=_die_with_parent)
        self.port = int(self._proxy.stdout.readline())

    def log_text(self):
        """What the child wrote so far (for failure messages)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def stop(self):
        if self._proxy is not None:
            self._proxy.kill()
            self._proxy.wait(timeout=STOP_TIMEOUT_S)
            self._proxy.stdout.close()
            self._proxy = None
        if self._child is not None:
            if self._child.poll() is None:
                self._child.terminate()
                try:
                    self._child.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    self._child.kill()
                    self._child.wait(timeout=STOP_TIMEOUT_S)
            self._child = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def alive(self):
        return self._child is not None and self._child.poll() is None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
