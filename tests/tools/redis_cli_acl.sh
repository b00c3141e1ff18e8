#!/usr/bin/env bash
# ACL users through redis-cli --user/--pass (issue 12): the same users on latchd and on a
# real redis-server, the same refusals shown the same way; then latchd's LOCK.* commands,
# which Redis lacks: one team's user cannot release another team's lock.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# Users from latchd.conf's `user` directive on one side, ACL SETUSER on the other.
start_latchd "$1" \
  --user payments on '>pay' '~lock:payments:*' -@all +@write +@read +ping \
  --user reporting on '>rep' '%R~lock:*' -@all +@read +del +ping
start_redis
admin() { timeout 10 redis-cli -p "$1" "${@:2}"; }
admin "$REDIS_PORT" acl setuser payments on '>pay' '~lock:payments:*' -@all +@write +@read +ping >/dev/null
admin "$REDIS_PORT" acl setuser reporting on '>rep' '%R~lock:*' -@all +@read +del +ping >/dev/null

as() {  # as PORT USER PASS COMMAND...
  timeout 10 redis-cli -p "$1" --no-auth-warning --user "$2" --pass "$3" --no-raw "${@:4}" 2>&1
}
scenario() {
  local p=$1
  admin "$p" set lock:payments:42 token-a >/dev/null
  as "$p" payments pay acl whoami
  as "$p" payments pay set lock:payments:42 token-b
  as "$p" reporting rep get lock:payments:42
  as "$p" reporting rep del lock:payments:42
  as "$p" reporting rep set lock:payments:42 mine
  as "$p" reporting rep flushall
  as "$p" payments pay get lock:reporting:1
  as "$p" payments wrong ping
  as "$p" nosuch pay ping
  as "$p" payments pay del lock:payments:42
}
expected="$(scenario "$REDIS_PORT")"
actual="$(scenario "$LATCHD_PORT")"
echo "== redis-cli --user/--pass against latchd:"
echo "$actual"
if [[ "$expected" != "$actual" ]]; then
  echo "FAIL: output differs from redis-server's (- redis, + latchd):" >&2
  diff <(echo "$expected") <(echo "$actual") >&2 || true
  exit 1
fi
# LOCK.*: payments takes its lock; reporting can read it but not release it.
[[ "$(as "$LATCHD_PORT" payments pay lock.acquire lock:payments:7 owner-a 10000)" == "(integer) "* ]] ||
  fail "payments could not take its own lock"
got="$(as "$LATCHD_PORT" reporting rep lock.release lock:payments:7 owner-a)"
[[ "$got" == "(error) NOPERM this user has no permissions to run the 'lock.release' command" ]] ||
  fail "reporting's LOCK.RELEASE: $got"
[[ "$(as "$LATCHD_PORT" payments pay lock.release lock:payments:7 owner-a)" == "(integer) 1" ]] ||
  fail "payments could not release its own lock"
echo "PASS: redis-cli --user/--pass sees the same ACL refusals on latchd and redis-server"
