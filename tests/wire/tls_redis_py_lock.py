"""redis-py (Debian's python3-redis) over TLS: takes and releases a redis.lock.Lock.

Run by tls_wire_test.cpp: tls_redis_py_lock.py PORT CA_FILE CLIENT_CERT CLIENT_KEY.
Prints "acquired released" on success; any failure raises (non-zero exit).
"""
import sys

import redis

port, ca, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
client = redis.Redis(host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=ca,
                     ssl_certfile=cert, ssl_keyfile=key, socket_timeout=5)
lock = client.lock("lock:tls", timeout=10)
assert lock.acquire(blocking=False), "the lock was not granted"
assert client.get("lock:tls") == lock.local.token, "the key does not hold our token"
other = client.lock("lock:tls", timeout=10)
assert not other.acquire(blocking=False), "a second holder was granted the lock"
lock.release()
assert client.exists("lock:tls") == 0, "release left the key"
print("acquired released")
