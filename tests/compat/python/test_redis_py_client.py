"""The plain redis-py client, unmodified, against the server named by COMPAT_SERVER: the calls
a lock user meets first (connect, ping, strings with options, pipelines, scripts, errors).

redis-py 4.3.4 speaks RESP2 only (protocol=3 arrived in redis-py 5.0), so no RESP3 test here;
the node-redis and C++ client tests cover HELLO 3.
"""

import unittest

import redis
from redis.exceptions import NoScriptError, ResponseError

from pinned import require_pinned_redis_py
from server_process import ServerProcess

_server = None


def setUpModule():
    global _server
    require_pinned_redis_py()
    _server = ServerProcess().start()


def tearDownModule():
    if _server is not None:
        _server.stop()


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client = redis.Redis(host="127.0.0.1", port=_server.port, socket_timeout=10)
        self.text = redis.Redis(host="127.0.0.1", port=_server.port, socket_timeout=10,
                                decode_responses=True)
        self.key = f"compat:client:{self._testMethodName}"
        self.client.delete(self.key, self.key + ":2")

    def tearDown(self):
        self.client.close()
        self.text.close()

    def test_ping(self):
        self.assertTrue(self.client.ping())
        self.assertEqual(self.client.echo("hello"), b"hello")

    def test_set_and_get_bytes_and_text(self):
        self.assertTrue(self.client.set(self.key, b"\x00\xffbinary\r\n"))
        self.assertEqual(self.client.get(self.key), b"\x00\xffbinary\r\n")
        self.assertTrue(self.text.set(self.key, "h\u00e9llo"))
        self.assertEqual(self.text.get(self.key), "h\u00e9llo")
        self.assertIsNone(self.client.get(self.key + ":2"))

    def test_set_nx_px_and_xx(self):
        self.assertTrue(self.client.set(self.key, "a", nx=True, px=10000))
        self.assertIsNone(self.client.set(self.key, "b", nx=True, px=10000))
        self.assertEqual(self.client.get(self.key), b"a")
        self.assertTrue(0 < self.client.pttl(self.key) <= 10000)
        self.assertTrue(self.client.set(self.key, "c", xx=True, ex=100))
        self.assertTrue(99 <= self.client.ttl(self.key) <= 100)
        self.assertIsNone(self.client.set(self.key + ":2", "d", xx=True))
        self.assertEqual(self.client.set(self.key, "e", get=True), b"c")

    def test_keys_and_expiry(self):
        self.client.set(self.key, "1")
        self.assertEqual(self.client.exists(self.key, self.key + ":2"), 1)
        self.assertEqual(self.client.incr(self.key), 2)
        self.assertEqual(self.client.incrby(self.key, 10), 12)
        self.assertEqual(self.client.ttl(self.key), -1)
        self.assertTrue(self.client.expire(self.key, 100))
        self.assertTrue(self.client.persist(self.key))
        self.assertEqual(self.client.pttl(self.key + ":2"), -2)
        self.assertEqual(self.client.delete(self.key, self.key + ":2"), 1)

    def test_mset_mget(self):
        self.assertTrue(self.client.mset({self.key: "x", self.key + ":2": "y"}))
        self.assertEqual(self.client.mget(self.key, self.key + ":2", self.key + ":3"),
                         [b"x", b"y", None])

    def test_pipeline_without_transaction(self):
        pipe = self.client.pipeline(transaction=False)
        pipe.set(self.key, "1").incr(self.key).get(self.key).get(self.key + ":2")
        self.assertEqual(pipe.execute(), [True, 2, b"2", None])

    def test_pipeline_with_transaction(self):
        with self.client.pipeline(transaction=True) as pipe:
            pipe.set(self.key, "1", px=5000).incr(self.key).pttl(self.key)
            result = pipe.execute()
        self.assertEqual(result[:2], [True, 2])
        self.assertTrue(0 < result[2] <= 5000)

    def test_pipeline_reports_errors_per_command(self):
        self.client.set(self.key, "not a number")
        pipe = self.client.pipeline(transaction=False)
        pipe.incr(self.key).get(self.key)
        result = pipe.execute(raise_on_error=False)
        self.assertIsInstance(result[0], ResponseError)
        self.assertEqual(str(result[0]), "value is not an integer or out of range")
        self.assertEqual(result[1], b"not a number")

    def test_watch_transaction_retries_after_a_conflict(self):
        self.client.set(self.key, "1")
        with self.client.pipeline() as pipe:
            pipe.watch(self.key)
            current = int(pipe.get(self.key))
            self.client.set(self.key, "100")  # another writer touches the watched key
            pipe.multi()
            pipe.set(self.key, current + 1)
            with self.assertRaises(redis.WatchError):
                pipe.execute()
        self.assertEqual(self.client.get(self.key), b"100")

    def test_client_name_is_sent_on_connect(self):
        named = redis.Redis(host="127.0.0.1", port=_server.port, socket_timeout=10,
                            client_name="compat-python")
        try:
            self.assertEqual(named.client_getname(), "compat-python")
        finally:
            named.close()

    def test_eval_and_registered_script(self):
        self.assertEqual(self.client.eval("return {1, 'two', false}", 0), [1, b"two", None])
        self.client.set(self.key, "v")
        self.assertEqual(
            self.client.eval("return redis.call('get', KEYS[1])", 1, self.key), b"v")
        script = self.client.register_script("return ARGV[1] .. KEYS[1]")
        self.assertEqual(script(keys=[self.key], args=["x"]), f"x{self.key}".encode())
        self.assertEqual(self.client.script_exists(script.sha), [True])

    def test_evalsha_of_unknown_script_raises_no_script(self):
        with self.assertRaisesRegex(NoScriptError, "No matching script. Please use EVAL."):
            self.client.evalsha("0" * 40, 0)

    def test_unknown_command_error_text(self):
        with self.assertRaises(ResponseError) as raised:
            self.client.execute_command("NOSUCHCOMMAND", "a")
        self.assertEqual(str(raised.exception),
                         "unknown command 'NOSUCHCOMMAND', with args beginning with: 'a' ")

    def test_wrong_arity_error_text(self):
        with self.assertRaises(ResponseError) as raised:
            self.client.execute_command("GET")
        self.assertEqual(str(raised.exception), "wrong number of arguments for 'get' command")


if __name__ == "__main__":
    unittest.main()
