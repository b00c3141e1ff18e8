"""redis-py's Sentinel and redis.lock.Lock, unmodified, against a three-node latchd cluster.

Each node answers Sentinel's discovery commands for the master `latch` (the Raft leader), so
Sentinel([...nodes...]).master_for('latch') connects to the leader, and after kill -9 of the
leader finds the next one: redis-py's pool asks the sentinels again after a dropped
connection (a node that is no longer the leader, still alive, closes its clients; a follower
relays a client that reaches it to the leader). The application
retries what failed during the failover (ConnectionError, TimeoutError, -TRYAGAIN), as it
would around a Redis Sentinel failover. Every wait is bounded.
"""

import time
import unittest

from redis.exceptions import ConnectionError, ResponseError, TimeoutError
from redis.lock import Lock
from redis.sentinel import Sentinel

from latchd_cluster import LatchdCluster
from pinned import require_pinned_redis_py

FAILOVER_TIMEOUT_S = 30.0  # an election takes 1-2 election timeouts (1 s); a split vote more


def retry_through_failover(action, timeout=FAILOVER_TIMEOUT_S):
    """Runs `action` until it returns without a failover error; its result. Polls every 20 ms."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return action()
        except (ConnectionError, TimeoutError) as error:
            last = error
        except ResponseError as error:
            if not str(error).startswith("TRYAGAIN"):
                raise
            last = error
        if time.monotonic() > deadline:
            raise AssertionError(f"still failing after {timeout} s: {last!r}")
        time.sleep(0.02)


class SentinelTest(unittest.TestCase):
    def setUp(self):
        require_pinned_redis_py()
        self.cluster = LatchdCluster().start()
        self.addCleanup(self.cluster.stop)
        self.sentinel = Sentinel([("127.0.0.1", p) for p in self.cluster.ports],
                                 socket_timeout=2.0)
        self.master = self.sentinel.master_for("latch", socket_timeout=2.0)
        self.addCleanup(self.master.close)

    def leader(self):
        """The node index the sentinels name as the master."""
        _, port = retry_through_failover(lambda: self.sentinel.discover_master("latch"))
        return self.cluster.node_of_port(port)

    def test_lock_follows_the_leader_through_kill_9(self):
        old = self.leader()
        held = Lock(self.master, "compat:sentinel:held", timeout=4.0)
        # The first acquire may meet the leader before its election barrier applied.
        self.assertTrue(retry_through_failover(lambda: held.acquire(blocking=False)))
        acquired_at = time.monotonic()
        other = Lock(self.master, "compat:sentinel:other", timeout=30.0)
        self.assertTrue(other.acquire(blocking=False))
        other.release()
        self.assertEqual(self.master.get("compat:sentinel:held"), held.local.token)

        self.cluster.kill9(old)

        # Through the same client: the pool finds the new leader after the failover.
        fresh = Lock(self.master, "compat:sentinel:after", timeout=30.0)
        self.assertTrue(retry_through_failover(lambda: fresh.acquire(blocking=False)),
                        self.cluster.logs())
        self.assertNotEqual(self.leader(), old)
        self.assertEqual(self.master.get("compat:sentinel:after"), fresh.local.token)
        fresh.release()
        self.assertIsNone(self.master.get("compat:sentinel:after"))

        # The lock acknowledged by the old leader is held on the new one until its TTL ran
        # out: a second holder is refused until then, and only then granted.
        rival = Lock(self.master, "compat:sentinel:held", timeout=4.0)
        deadline = time.monotonic() + FAILOVER_TIMEOUT_S
        while not retry_through_failover(lambda: rival.acquire(blocking=False)):
            self.assertLess(time.monotonic(), deadline, "the held lock never expired")
            time.sleep(0.05)
        self.assertGreaterEqual(time.monotonic() - acquired_at, 4.0,
                                "the new leader granted the lock before its TTL ran out")
        rival.release()

    def test_sentinel_commands_parse_as_redis_py_expects(self):
        self.leader()
        node = self.sentinel.sentinels[0]
        masters = node.sentinel_masters()
        self.assertEqual(list(masters), ["latch"])
        state = masters["latch"]
        self.assertTrue(state["is_master"])
        self.assertFalse(state["is_sdown"] or state["is_odown"])
        self.assertEqual(state["num-other-sentinels"], 2)
        self.assertEqual(state["quorum"], 2)
        self.assertEqual((state["ip"], state["port"]), self.sentinel.discover_master("latch"))
        replicas = retry_through_failover(lambda: self.sentinel.discover_slaves("latch"))
        self.assertEqual(len(replicas), 2)
        self.assertNotIn(self.sentinel.discover_master("latch"), replicas)
        self.assertEqual(len(node.sentinel_sentinels("latch")), 2)
        host, port = node.sentinel_get_master_addr_by_name("latch")  # bytes: no decoding
        self.assertEqual((host.decode(), port), self.sentinel.discover_master("latch"))
        # A replica connection is relayed to the leader (docs/CLUSTER.md, "Forwarding"):
        # reads are the leader's (linearizable), and writes go through.
        replica = self.sentinel.slave_for("latch", socket_timeout=2.0)
        self.addCleanup(replica.close)
        # A new leader's first write can meet it before its election barrier applied.
        self.assertTrue(
            retry_through_failover(lambda: self.master.set("compat:sentinel:read", "v")))
        self.assertEqual(retry_through_failover(lambda: self.master.get("compat:sentinel:read")),
                         b"v")
        self.assertEqual(replica.get("compat:sentinel:read"), b"v")
        self.assertTrue(replica.set("compat:sentinel:read", "w"))
        self.assertEqual(self.master.get("compat:sentinel:read"), b"w")


if __name__ == "__main__":
    unittest.main()
