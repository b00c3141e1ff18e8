"""redis-py's redis.lock.Lock, unmodified, against the server named by COMPAT_SERVER.

The Lock takes with SET NX PX and releases, extends and reacquires with three Lua scripts run
by EVALSHA (SCRIPT LOAD after a NOSCRIPT reply). TTL behaviour cannot use a manual clock here,
so those tests wait (bounded) until the server has let a short TTL run out, never for a
guessed time.
"""

import threading
import time
import unittest

import redis
from redis.exceptions import LockError, LockNotOwnedError

from pinned import require_pinned_redis_py
from server_process import ServerProcess

_server = None


def wait_until(condition, timeout=5.0):
    """Polls `condition` every 5 ms until it holds or `timeout` seconds pass; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return condition()


def setUpModule():
    global _server
    require_pinned_redis_py()
    _server = ServerProcess().start()


def tearDownModule():
    if _server is not None:
        _server.stop()


class LockTest(unittest.TestCase):
    def setUp(self):
        self.client = redis.Redis(host="127.0.0.1", port=_server.port, socket_timeout=10)
        self.key = f"compat:lock:{self._testMethodName}"
        self.client.delete(self.key)

    def tearDown(self):
        self.client.close()

    def new_lock(self, **options):
        return self.client.lock(self.key, **options)

    def wait_until_expired(self):
        """Until the server has let the key go (its clock is real)."""
        self.assertTrue(wait_until(lambda: self.client.exists(self.key) == 0), "never expired")

    def test_acquire_stores_token_with_ttl_and_excludes_others(self):
        lock = self.new_lock(timeout=10)
        self.assertTrue(lock.acquire(blocking=False))
        self.assertEqual(self.client.get(self.key), lock.local.token)
        self.assertTrue(0 < self.client.pttl(self.key) <= 10000)
        self.assertTrue(lock.locked())
        self.assertTrue(lock.owned())

        other = self.new_lock(timeout=10)
        self.assertFalse(other.acquire(blocking=False))
        self.assertTrue(other.locked())
        self.assertFalse(other.owned())

    def test_acquire_with_given_token(self):
        lock = self.new_lock(timeout=10)
        self.assertTrue(lock.acquire(blocking=False, token="my-token"))
        self.assertEqual(self.client.get(self.key), b"my-token")

    def test_blocking_acquire_gives_up_after_blocking_timeout(self):
        holder = self.new_lock(timeout=10)
        self.assertTrue(holder.acquire(blocking=False))
        waiter = self.new_lock(timeout=10)
        started = time.monotonic()
        self.assertFalse(waiter.acquire(blocking=True, blocking_timeout=0.3, sleep=0.05))
        elapsed = time.monotonic() - started
        self.assertGreaterEqual(elapsed, 0.2)
        self.assertLess(elapsed, 3.0)
        self.assertEqual(self.client.get(self.key), holder.local.token)

    def test_blocking_acquire_succeeds_when_holder_releases(self):
        holder = self.new_lock(timeout=10, thread_local=False)
        self.assertTrue(holder.acquire(blocking=False))
        releaser = threading.Timer(0.2, holder.release)
        releaser.start()
        try:
            waiter = self.new_lock(timeout=10)
            started = time.monotonic()
            self.assertTrue(waiter.acquire(blocking=True, blocking_timeout=5, sleep=0.02))
            self.assertLess(time.monotonic() - started, 4.0)
            self.assertEqual(self.client.get(self.key), waiter.local.token)
        finally:
            releaser.join(timeout=5)

    def test_blocking_acquire_succeeds_once_holder_ttl_expires(self):
        holder = self.new_lock(timeout=0.3)
        self.assertTrue(holder.acquire(blocking=False))
        waiter = self.new_lock(timeout=10)
        started = time.monotonic()
        self.assertTrue(waiter.acquire(blocking=True, blocking_timeout=5, sleep=0.02))
        self.assertLess(time.monotonic() - started, 4.0)
        self.assertEqual(self.client.get(self.key), waiter.local.token)

    def test_release_deletes_the_key(self):
        lock = self.new_lock(timeout=10)
        self.assertTrue(lock.acquire(blocking=False))
        lock.release()
        self.assertIsNone(self.client.get(self.key))
        self.assertFalse(lock.locked())
        with self.assertRaisesRegex(LockError, "Cannot release an unlocked lock"):
            lock.release()
        self.assertTrue(self.new_lock(timeout=10).acquire(blocking=False))

    def test_release_runs_after_script_flush(self):
        # A fresh script cache answers EVALSHA with NOSCRIPT; redis-py then loads the script.
        self.assertTrue(self.client.script_flush())
        lock = self.new_lock(timeout=10)
        self.assertTrue(lock.acquire(blocking=False))
        lock.release()
        self.assertIsNone(self.client.get(self.key))
        self.assertEqual(self.client.script_exists(lock.lua_release.sha), [True])

    def test_release_after_expiry_raises_lock_not_owned(self):
        lock = self.new_lock(timeout=0.2)
        self.assertTrue(lock.acquire(blocking=False))
        self.wait_until_expired()
        self.assertIsNone(self.client.get(self.key))
        with self.assertRaisesRegex(LockNotOwnedError,
                                    "Cannot release a lock that's no longer owned"):
            lock.release()

    def test_release_after_expiry_leaves_the_new_holder_alone(self):
        first = self.new_lock(timeout=0.2)
        self.assertTrue(first.acquire(blocking=False))
        self.wait_until_expired()
        second = self.new_lock(timeout=10)
        self.assertTrue(second.acquire(blocking=False))
        with self.assertRaises(LockNotOwnedError):
            first.release()
        self.assertEqual(self.client.get(self.key), second.local.token)
        second.release()
        self.assertIsNone(self.client.get(self.key))

    def test_extend_adds_to_the_remaining_ttl(self):
        lock = self.new_lock(timeout=10)
        self.assertTrue(lock.acquire(blocking=False))
        self.assertTrue(lock.extend(20))
        self.assertTrue(20000 < self.client.pttl(self.key) <= 30000)

    def test_extend_with_replace_ttl_sets_the_ttl(self):
        lock = self.new_lock(timeout=10)
        self.assertTrue(lock.acquire(blocking=False))
        self.assertTrue(lock.extend(60, replace_ttl=True))
        self.assertTrue(50000 < self.client.pttl(self.key) <= 60000)
        self.assertTrue(lock.extend(0.5, replace_ttl=True))
        self.assertTrue(0 < self.client.pttl(self.key) <= 500)

    def test_extend_keeps_the_lock_past_its_first_ttl(self):
        lock = self.new_lock(timeout=1)
        self.assertTrue(lock.acquire(blocking=False))
        self.assertTrue(lock.extend(10))
        # Past the first TTL (1 s) on the server's clock: 1.2 s off what was left (or gone).
        left = self.client.pttl(self.key)
        self.assertTrue(wait_until(lambda: self.client.pttl(self.key) in (-2,) or
                                   self.client.pttl(self.key) <= left - 1200, timeout=10))
        self.assertTrue(lock.owned())
        lock.release()

    def test_extend_after_expiry_raises_lock_not_owned(self):
        lock = self.new_lock(timeout=0.2)
        self.assertTrue(lock.acquire(blocking=False))
        self.wait_until_expired()
        with self.assertRaisesRegex(LockNotOwnedError,
                                    "Cannot extend a lock that's no longer owned"):
            lock.extend(10)
        self.assertIsNone(self.client.get(self.key))

    def test_extend_of_a_key_without_ttl_is_refused(self):
        # The script refuses when PTTL is -1 (the key lost its TTL, e.g. by a plain SET).
        lock = self.new_lock(timeout=10)
        self.assertTrue(lock.acquire(blocking=False))
        self.assertTrue(self.client.persist(self.key))
        with self.assertRaises(LockNotOwnedError):
            lock.extend(10)
        self.assertEqual(self.client.pttl(self.key), -1)

    def test_reacquire_resets_the_ttl_to_the_timeout(self):
        lock = self.new_lock(timeout=10)
        self.assertTrue(lock.acquire(blocking=False))
        self.assertTrue(self.client.pexpire(self.key, 1000))
        self.assertTrue(lock.reacquire())
        self.assertTrue(9000 < self.client.pttl(self.key) <= 10000)

    def test_reacquire_after_expiry_raises_lock_not_owned(self):
        lock = self.new_lock(timeout=0.2)
        self.assertTrue(lock.acquire(blocking=False))
        self.wait_until_expired()
        with self.assertRaisesRegex(LockNotOwnedError,
                                    "Cannot reacquire a lock that's no longer owned"):
            lock.reacquire()

    def test_reacquire_by_non_owner_raises_and_keeps_the_holder(self):
        holder = self.new_lock(timeout=10)
        self.assertTrue(holder.acquire(blocking=False))
        intruder = self.new_lock(timeout=10)
        intruder.local.token = b"not-the-token"
        with self.assertRaises(LockNotOwnedError):
            intruder.reacquire()
        with self.assertRaises(LockNotOwnedError):
            intruder.release()
        self.assertEqual(self.client.get(self.key), holder.local.token)

    def test_context_manager_holds_inside_and_releases_after(self):
        with self.new_lock(timeout=10, blocking_timeout=1) as lock:
            self.assertEqual(self.client.get(self.key), lock.local.token)
        self.assertIsNone(self.client.get(self.key))

    def test_lock_without_timeout_has_no_ttl(self):
        lock = self.new_lock()
        self.assertTrue(lock.acquire(blocking=False))
        self.assertEqual(self.client.pttl(self.key), -1)
        lock.release()
        self.assertIsNone(self.client.get(self.key))


class CounterUnderLockTest(unittest.TestCase):
    """20 threads x 20 increments by GET then SET under the lock: exactly 400, never two holders."""

    THREADS = 20
    INCREMENTS = 20

    def test_counter_reaches_exactly_400(self):
        key = "compat:lock:counter"
        counter = "compat:counter"
        pool = redis.ConnectionPool(host="127.0.0.1", port=_server.port, socket_timeout=10,
                                    max_connections=self.THREADS + 2)
        client = redis.Redis(connection_pool=pool)
        client.delete(key, counter)
        inside = 0
        max_inside = 0
        guard = threading.Lock()
        errors = []

        def worker():
            nonlocal inside, max_inside
            try:
                lock = client.lock(key, timeout=10, sleep=0.002, blocking_timeout=60)
                for _ in range(self.INCREMENTS):
                    if not lock.acquire():
                        raise AssertionError("acquire timed out after 60 s")
                    with guard:
                        inside += 1
                        max_inside = max(max_inside, inside)
                    value = int(client.get(counter) or 0)
                    client.set(counter, value + 1)
                    with guard:
                        inside -= 1
                    lock.release()
            except Exception as error:  # reported by the main thread
                errors.append(error)

        threads = [threading.Thread(target=worker) for _ in range(self.THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        try:
            self.assertFalse(any(thread.is_alive() for thread in threads), "workers hung")
            self.assertEqual(errors, [])
            self.assertEqual(max_inside, 1)
            self.assertEqual(int(client.get(counter)), self.THREADS * self.INCREMENTS)
            self.assertIsNone(client.get(key))
        finally:
            pool.disconnect()


class DatabaseLockTest(unittest.TestCase):
    """Redis(db=5): the pool SELECTs 5 on every connection; the Lock and its scripts work there
    and a lock of the same name in db 0 is another lock."""

    def setUp(self):
        self.in5 = redis.Redis(host="127.0.0.1", port=_server.port, db=5, socket_timeout=10)
        self.in0 = redis.Redis(host="127.0.0.1", port=_server.port, db=0, socket_timeout=10)
        self.key = f"compat:lock:{self._testMethodName}"
        self.in5.delete(self.key)
        self.in0.delete(self.key)

    def tearDown(self):
        self.in5.close()
        self.in0.close()

    def test_lock_in_db5_is_independent_of_db0(self):
        lock5 = self.in5.lock(self.key, timeout=10)
        self.assertTrue(lock5.acquire(blocking=False))
        self.assertEqual(self.in5.get(self.key), lock5.local.token)
        self.assertIsNone(self.in0.get(self.key))
        lock0 = self.in0.lock(self.key, timeout=10)
        self.assertTrue(lock0.acquire(blocking=False))
        self.assertFalse(self.in5.lock(self.key, timeout=10).acquire(blocking=False))
        lock5.extend(5)
        self.assertTrue(10000 < self.in5.pttl(self.key) <= 15000)
        lock5.release()
        self.assertIsNone(self.in5.get(self.key))
        self.assertEqual(self.in0.get(self.key), lock0.local.token)
        lock0.release()
        self.assertEqual(self.in5.dbsize(), 0)

    def test_blocking_acquire_in_db5_after_release(self):
        holder = self.in5.lock(self.key, timeout=10)
        self.assertTrue(holder.acquire(blocking=False))
        got = []

        def waiter():
            other = redis.Redis(host="127.0.0.1", port=_server.port, db=5, socket_timeout=10,
                                client_name="waiter")
            lock = other.lock(self.key, timeout=10, sleep=0.01)
            got.append(lock.acquire(blocking=True, blocking_timeout=10))
            lock.release()
            other.close()

        thread = threading.Thread(target=waiter)
        thread.start()
        # Released once the waiter has tried and found the lock taken.
        self.assertTrue(wait_until(lambda: any(
            c.get("name") == "waiter" and c.get("cmd") == "set" for c in self.in0.client_list())))
        holder.release()
        thread.join(timeout=20)
        self.assertFalse(thread.is_alive())
        self.assertEqual(got, [True])


if __name__ == "__main__":
    unittest.main()
