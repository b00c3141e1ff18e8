#!/usr/bin/env bash
# redis-cli --pipe (mass insertion) of 10,000 commands into latchd: every reply arrives and
# none is an error, and the data is there afterwards.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
start_latchd "$1"

input="$(work_dir)/commands.resp"
# 10,000 commands in RESP, as the mass-insertion guide writes them: 4,000 SET (half with a
# TTL), 2,000 INCR, 2,000 GET, 1,000 SET NX PX, 1,000 DEL.
python3 - "$input" <<'PY'
import sys
def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out
cmds = []
for i in range(4000):
    cmds.append(resp("SET", f"key:{i}", f"value:{i}") if i % 2 else
                resp("SET", f"key:{i}", f"value:{i}", "EX", "3600"))
for i in range(2000):
    cmds.append(resp("INCR", f"counter:{i % 10}"))
for i in range(2000):
    cmds.append(resp("GET", f"key:{i}"))
for i in range(1000):
    cmds.append(resp("SET", f"lock:{i}", "owner", "NX", "PX", "600000"))
for i in range(1000):
    cmds.append(resp("DEL", f"key:{i}"))
assert len(cmds) == 10000
open(sys.argv[1], "wb").write(b"".join(cmds))
PY

output="$(timeout 120 redis-cli -p "$LATCHD_PORT" --pipe <"$input" 2>&1)" ||
  fail "redis-cli --pipe exited with $?: $output"
echo "$output"
grep -q "errors: 0, replies: 10000" <<<"$output" || fail "expected 'errors: 0, replies: 10000'"

cli() { timeout 10 redis-cli -p "$LATCHD_PORT" "$@"; }
# 4,000 keys - 1,000 deleted + 10 counters + 1,000 locks.
[[ "$(cli dbsize)" == 4010 ]] || fail "dbsize: expected 4010, got $(cli dbsize)"
[[ "$(cli get counter:3)" == 200 ]] || fail "counter:3: expected 200, got $(cli get counter:3)"
[[ "$(cli get key:3999)" == value:3999 ]] || fail "key:3999: got $(cli get key:3999)"
[[ "$(cli exists key:0)" == 0 ]] || fail "key:0 should have been deleted"
[[ "$(cli ttl key:1000)" -gt 3500 ]] || fail "key:1000 should have a TTL"
echo "PASS: redis-cli --pipe"
