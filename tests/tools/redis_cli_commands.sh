#!/usr/bin/env bash
# redis-cli in RESP2 and RESP3 (-3) against latchd and against a real redis-server: the
# formatted output (--no-raw, as a terminal shows it) must be the same, except HELLO's
# version and client id.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
start_latchd "$1"
start_redis

commands="$(work_dir)/commands.txt"
cat >"$commands" <<'CMDS'
ping
ping "hello world"
set lock:1 token-a NX PX 10000
set lock:1 token-b NX PX 10000
get lock:1
get missing
mget lock:1 missing
ttl lock:1
exists lock:1 missing
incr counter
incrby counter 41
decr counter
get counter
set lock:2 v EXAT 4102444800
expiretime lock:2
config get timeout
config get nosuch
del lock:1 lock:2 counter
dbsize
getdel missing
set k v GET
set k w GET
type k
type missing
foo bar
set k
incr k
select 1
CMDS

# HELLO's version and id differ between servers by nature: mask their values, whether shown
# as a RESP3 map ('2# "version" => "7.0.15"') or as a RESP2 array (the element after "id").
mask_hello() {
  awk '/"(version|id)" => / { sub(/=> .*/, "=> <masked>") }
       masked_next { sub(/\) .*/, ") <masked>"); masked_next = 0 }
       /^ *[0-9]+\) "(version|id)"$/ { masked_next = 1 }
       { print }'
}

run() {
  local port=$1 proto=$2
  {
    timeout 10 redis-cli -p "$port" "$proto" --no-raw hello | mask_hello
    timeout 10 redis-cli -p "$port" "$proto" --no-raw client setname tools-test
    timeout 10 redis-cli -p "$port" "$proto" --no-raw <"$commands"
  } 2>&1
}

status=0
for proto in -2 -3; do
  expected="$(run "$REDIS_PORT" "$proto")"
  actual="$(run "$LATCHD_PORT" "$proto")"
  echo "== redis-cli $proto against latchd:"
  echo "$actual"
  if [[ "$expected" != "$actual" ]]; then
    echo "FAIL: redis-cli $proto output differs from redis-server's (- redis, + latchd):" >&2
    diff <(echo "$expected") <(echo "$actual") >&2 || true
    status=1
  fi
done
# The RESP3 HELLO reply is a map with the protocol version in it.
timeout 10 redis-cli -3 -p "$LATCHD_PORT" --no-raw hello | grep -q '"proto" => (integer) 3' ||
  fail "redis-cli -3 hello: no '\"proto\" => (integer) 3'"
((status == 0)) || exit 1
echo "PASS: redis-cli -2/-3 output matches redis-server"
