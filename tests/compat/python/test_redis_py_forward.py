"""redis-py's plain client and redis.lock.Lock, unmodified, on a follower's port of a
three-node latchd cluster: the follower relays the session to the leader (docs/CLUSTER.md,
"Forwarding"), so an application given any node's address takes locks as on the leader.
Every wait is bounded.
"""

import time
import unittest

import redis
from redis.exceptions import ResponseError
from redis.lock import Lock

from latchd_cluster import LatchdCluster
from pinned import require_pinned_redis_py

LEADER_TIMEOUT_S = 30.0  # an election takes 1-2 election timeouts (1 s); a split vote more


def until_leader_serves(action, timeout=LEADER_TIMEOUT_S):
    """Runs `action` until no -TRYAGAIN (no leader yet, or its election barrier applying)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return action()
        except ResponseError as error:
            if not str(error).startswith("TRYAGAIN") or time.monotonic() > deadline:
                raise
        time.sleep(0.02)


class ForwardTest(unittest.TestCase):
    def setUp(self):
        require_pinned_redis_py()
        self.cluster = LatchdCluster().start()
        self.addCleanup(self.cluster.stop)
        any_node = redis.Redis(port=self.cluster.ports[0], socket_timeout=5.0)
        self.addCleanup(any_node.close)
        deadline = time.monotonic() + LEADER_TIMEOUT_S
        while (addr := any_node.execute_command("SENTINEL", "get-master-addr-by-name",
                                                "latch")) is None:
            self.assertLess(time.monotonic(), deadline, self.cluster.logs())
            time.sleep(0.02)
        leader_port = int(addr[1])
        followers = [p for p in self.cluster.ports if p != leader_port]
        self.leader = redis.Redis(port=leader_port, socket_timeout=5.0)
        self.first = redis.Redis(port=followers[0], socket_timeout=5.0)
        self.second = redis.Redis(port=followers[1], socket_timeout=5.0)
        for client in (self.leader, self.first, self.second):
            self.addCleanup(client.close)
        until_leader_serves(lambda: self.first.set("compat:forward:ready", "1"))

    def test_lock_acquire_and_release_through_followers(self):
        held = Lock(self.first, "compat:forward:lock", timeout=30.0)
        self.assertTrue(until_leader_serves(lambda: held.acquire(blocking=False)))
        # The leader holds it, with the token the follower's client was given.
        self.assertEqual(self.leader.get("compat:forward:lock"), held.local.token)
        rival = Lock(self.second, "compat:forward:lock", timeout=30.0)
        self.assertFalse(rival.acquire(blocking=False))
        self.assertTrue(held.owned())
        self.assertTrue(held.extend(10.0))
        held.release()
        self.assertIsNone(self.leader.get("compat:forward:lock"))
        self.assertTrue(rival.acquire(blocking=True, blocking_timeout=10.0))
        self.assertEqual(self.first.get("compat:forward:lock"), rival.local.token)
        rival.release()
        self.assertFalse(self.second.exists("compat:forward:lock"))


if __name__ == "__main__":
    unittest.main()
