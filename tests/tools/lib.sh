# Shared by the tool tests: start servers on free loopback ports and stop them on exit.
# Source it after `set -euo pipefail`. Every wait is bounded.

# A port that is free right now on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_started_pids=()
_work_dir="$(mktemp -d /tmp/latch-tools-XXXXXX)"
_cleanup() {
  local pid
  for pid in "${_started_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${_started_pids[@]}"; do
    # Bounded: SIGKILL if the server did not stop within 5 s.
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$_work_dir"
}
trap _cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# wait_ready NAME PORT PID LOG: until the server answers PING (at most 15 s).
wait_ready() {
  local name=$1 port=$2 pid=$3 log=$4
  for _ in $(seq 150); do
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$log" >&2
      fail "$name exited during start-up"
    fi
    if [[ "$(timeout 2 redis-cli -p "$port" ping 2>/dev/null)" == PONG ]]; then
      return 0
    fi
    sleep 0.1
  done
  cat "$log" >&2
  fail "$name did not answer PING on port $port within 15 s"
}

# start_latchd LATCHD_BINARY [directives...]: sets LATCHD_PORT. With
# LATCH_TOOLS_REFERENCE=redis a redis-server stands in for latchd, to check a script itself.
start_latchd() {
  local binary=$1
  shift
  if [[ "${LATCH_TOOLS_REFERENCE:-}" == redis ]]; then
    start_redis "$@"
    LATCHD_PORT=$REDIS_PORT
    return 0
  fi
  [[ -x "$binary" ]] || fail "latchd binary not found: $binary"
  LATCHD_PORT="$(free_port)"
  local log="$_work_dir/latchd.log"
  "$binary" --port "$LATCHD_PORT" --bind 127.0.0.1 "$@" >"$log" 2>&1 &
  _started_pids+=($!)
  wait_ready latchd "$LATCHD_PORT" "$!" "$log"
}

# start_redis [directives...]: sets REDIS_PORT (the reference to compare latchd with).
start_redis() {
  REDIS_PORT="$(free_port)"
  local log="$_work_dir/redis.log"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    "$@" >"$log" 2>&1 &
  _started_pids+=($!)
  wait_ready redis-server "$REDIS_PORT" "$!" "$log"
}

work_dir() { echo "$_work_dir"; }
