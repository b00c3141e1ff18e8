"""docs/TESTING.md, example 1: a pytest fixture that runs latchd for one test.

latchd starts on a free loopback port with its test commands on and a manual clock, so the
test moves time with TEST.CLOCK ADVANCE instead of sleeping, and makes the server misbehave
with TEST.FAULT. Set LATCHD to the binary (ctest does).
"""
import os
import socket
import subprocess
import time

import pytest
import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def latchd():
    """A redis.Redis connected to a fresh latchd; the server is stopped after the test."""
    for _ in range(5):  # another process may take the port between free_port() and the bind
        port = free_port()
        proc = subprocess.Popen(
            [os.environ.get("LATCHD", "latchd"), "--port", str(port), "--bind", "127.0.0.1",
             "--enable-test-commands", "yes", "--clock", "manual", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=port, socket_timeout=2, decode_responses=True)
        deadline = time.monotonic() + 5
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.005)
        else:
            proc.kill()
            proc.wait()
            continue
        try:
            yield client
        finally:
            client.close()
            proc.terminate()
            proc.wait(timeout=5)
        return
    pytest.fail("latchd did not start")
