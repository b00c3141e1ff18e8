"""Three latchd processes on loopback as one Raft cluster (docs/CLUSTER.md), for the tests of
unmodified Sentinel clients.

Contract: LatchdCluster.start() returns once every node answers PING (bounded by
READY_TIMEOUT_S) and raises otherwise, leaving no child behind; stop() reaps every child and
removes the Raft directories. Ports are picked at run time (raft-peers names them all before
any node starts). Children die with the test process (PR_SET_PDEATHSIG).
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from server_process import _answers_ping, _die_with_parent

READY_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 5.0
NODES = 3


def _free_ports(count):
    """`count` distinct ports free on 127.0.0.1 right now (held open together while picked)."""
    probes = []
    try:
        for _ in range(count):
            probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            probe.bind(("127.0.0.1", 0))
            probes.append(probe)
        return [p.getsockname()[1] for p in probes]
    finally:
        for p in probes:
            p.close()


class LatchdCluster:
    def __init__(self, extra_args=()):
        binary = os.environ.get("LATCHD")
        if not binary or not os.access(binary, os.X_OK):
            raise RuntimeError(f"LATCHD must name the latchd binary (got {binary!r})")
        self._binary = binary
        self._extra_args = list(extra_args)
        ports = _free_ports(2 * NODES)
        self.raft_ports = ports[:NODES]
        self.ports = ports[NODES:]  # client ports, one per node
        self._peers = " ".join(f"{i + 1}=127.0.0.1:{self.raft_ports[i]}:{self.ports[i]}"
                               for i in range(NODES))
        self._dir = tempfile.mkdtemp(prefix="latch-compat-cluster-")
        self._children = [None] * NODES
        self._logs = [None] * NODES

    def start(self):
        try:
            for i in range(NODES):
                self._spawn(i)
            deadline = time.monotonic() + READY_TIMEOUT_S
            for i in range(NODES):
                while not _answers_ping(self.ports[i]):
                    if self._children[i].poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"latchd node {i + 1} did not start:\n{self.logs()}")
                    time.sleep(0.05)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, i):
        raft_dir = os.path.join(self._dir, f"node{i + 1}")
        os.makedirs(raft_dir, exist_ok=True)
        self._logs[i] = tempfile.TemporaryFile()
        self._children[i] = subprocess.Popen(
            [self._binary, "--port", str(self.ports[i]), "--bind", "127.0.0.1", "--raft-id",
             str(i + 1), "--raft-peers", self._peers, "--raft-dir", raft_dir] + self._extra_args,
            stdin=subprocess.DEVNULL, stdout=self._logs[i], stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent)

    def node_of_port(self, port):
        return self.ports.index(port)

    def kill9(self, i):
        """SIGKILL node i and reap it."""
        child = self._children[i]
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=STOP_TIMEOUT_S)
        self._children[i] = None

    def logs(self):
        text = ""
        for i, log in enumerate(self._logs):
            if log is not None:
                log.seek(0)
                text += f"--- node {i + 1}\n" + log.read().decode(errors="replace")
        return text

    def stop(self):
        for i, child in enumerate(self._children):
            if child is None:
                continue
            if child.poll() is None:
                child.terminate()
                try:
                    child.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait(timeout=STOP_TIMEOUT_S)
            self._children[i] = None
        for i, log in enumerate(self._logs):
            if log is not None:
                log.close()
                self._logs[i] = None
        shutil.rmtree(self._dir, ignore_errors=True)
