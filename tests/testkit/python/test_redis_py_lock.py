"""docs/TESTING.md, example 1: redis-py's Lock under an advanced clock and a dropped reply."""
import uuid

import pytest
import redis
from redis.exceptions import LockNotOwnedError


def test_lock_times_out_when_the_clock_moves_past_its_timeout(latchd):
    lock = latchd.lock("job", timeout=30)          # a 30 s lease, SET NX PX 30000
    assert lock.acquire(blocking=False)
    latchd.execute_command("TEST.CLOCK", "ADVANCE", 29_999)
    assert lock.owned()                            # 1 ms left: still ours
    latchd.execute_command("TEST.CLOCK", "ADVANCE", 1)
    assert not lock.owned()                        # 30 s passed: no sleep, no flakiness
    other = latchd.lock("job", timeout=30)
    assert other.acquire(blocking=False)           # someone else takes it ...
    with pytest.raises(LockNotOwnedError):
        lock.release()                             # ... and the late release is refused
    assert other.owned()


def test_lock_survives_a_dropped_reply_to_its_acquire(latchd):
    # The SET NX is applied but its reply is lost and the connection closed: the naive client
    # sees an error although it holds the lock.
    latchd.execute_command("TEST.FAULT", "DROP", "COMMAND", "set", "KEY", "job")
    token = uuid.uuid1().hex
    lock = latchd.lock("job", timeout=30)
    with pytest.raises(redis.ConnectionError):
        lock.acquire(blocking=False, token=token)
    # Survival: the caller chose its token, so it can ask whether the SET happened.
    assert latchd.get("job") == token
    assert not lock.acquire(blocking=False, token=uuid.uuid1().hex)  # held: a retry fails
    lock.local.token = token.encode()              # adopt the lease the server granted
    assert lock.owned()
    lock.release()
    assert latchd.get("job") is None
    assert latchd.info("faults")["fault_dropped_replies"] == 1


def test_an_orphaned_lease_expires_under_the_advanced_clock(latchd):
    latchd.execute_command("TEST.FAULT", "DROP", "COMMAND", "set")
    with pytest.raises(redis.ConnectionError):
        latchd.lock("job", timeout=10).acquire(blocking=False)
    assert latchd.pttl("job") == 10_000            # held by a token nobody knows
    latchd.execute_command("TEST.CLOCK", "ADVANCE", 10_000)
    assert latchd.lock("job", timeout=10).acquire(blocking=False)
