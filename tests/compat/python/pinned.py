"""The one redis-py version these tests were written against: Debian 12's python3-redis.

A different version may send other commands (redis-py 5 adds CLIENT SETINFO and RESP3), so the
tests refuse to run on it rather than pass or fail for reasons nobody chose.
"""

import redis

REDIS_PY_VERSION = "4.3.4"  # Debian bookworm: python3-redis 4.3.4-3


def require_pinned_redis_py():
    if redis.__version__ != REDIS_PY_VERSION:
        raise RuntimeError(
            f"these tests pin redis-py {REDIS_PY_VERSION} (Debian python3-redis 4.3.4-3), "
            f"found {redis.__version__} at {redis.__file__}")
