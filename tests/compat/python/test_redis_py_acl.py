"""ACL users through redis-py 4.3.4 (username=/password=), against the server named by
COMPAT_SERVER: two teams share the server; one cannot DEL or release (redis.lock.Lock, whose
release is a Lua script) the other's lock:payments:* keys. The same test runs against
redis-server, so latchd's refusals are Redis's.
"""

import unittest

import redis
from redis.exceptions import NoPermissionError, ResponseError

from pinned import require_pinned_redis_py
from server_process import ServerProcess

_server = None


def setUpModule():
    global _server
    require_pinned_redis_py()
    _server = ServerProcess().start()
    admin = redis.Redis(host="127.0.0.1", port=_server.port, socket_timeout=10)
    # Both teams may run scripts (redis-py's Lock needs them); keys decide what they touch.
    admin.acl_setuser("payments", enabled=True, passwords=["+pay"],
                      keys=["lock:payments:*"], commands=["+@all", "-@dangerous"])
    admin.acl_setuser("reporting", enabled=True, passwords=["+rep"],
                      keys=["lock:reporting:*"], commands=["+@all", "-@dangerous"])
    admin.close()


def tearDownModule():
    if _server is not None:
        _server.stop()


def connect(user, password):
    return redis.Redis(host="127.0.0.1", port=_server.port, socket_timeout=10,
                       username=user, password=password)


class AclTest(unittest.TestCase):
    def setUp(self):
        self.payments = connect("payments", "pay")
        self.reporting = connect("reporting", "rep")

    def tearDown(self):
        self.payments.close()
        self.reporting.close()

    def test_username_and_password_log_in(self):
        self.assertEqual(self.payments.acl_whoami(), "payments")
        with self.assertRaisesRegex(ResponseError, "^WRONGPASS invalid username-password pair"):
            connect("payments", "wrong").ping()

    def test_other_team_cannot_delete_or_release(self):
        lock = self.payments.lock("lock:payments:42", timeout=10)
        self.assertTrue(lock.acquire(blocking=False))
        with self.assertRaises(NoPermissionError):
            self.reporting.delete("lock:payments:42")
        stolen = self.reporting.lock("lock:payments:42", timeout=10)
        stolen.local.token = lock.local.token  # even knowing the token
        with self.assertRaises(NoPermissionError):
            stolen.release()
        with self.assertRaisesRegex(ResponseError, "The user executing the script can't access"):
            self.reporting.eval("return redis.call('del', 'lock:payments:42')", 0)
        self.assertTrue(self.payments.exists("lock:payments:42"))
        lock.release()
        self.assertFalse(self.payments.exists("lock:payments:42"))

    def test_script_runs_with_the_callers_permissions(self):
        self.payments.set("lock:payments:7", "t")
        with self.assertRaises(ResponseError) as err:
            self.reporting.eval("return redis.call('get', 'lock:payments:7')", 0)
        self.assertIn("The user executing the script can't access at least one of the keys",
                      str(err.exception))
        self.assertEqual(self.payments.eval("return redis.call('get', KEYS[1])", 1,
                                            "lock:payments:7"), b"t")

    def test_dangerous_commands_are_refused(self):
        with self.assertRaises(NoPermissionError):
            self.payments.flushall()


if __name__ == "__main__":
    unittest.main()
