#!/usr/bin/env bash
# scripts/start-cluster.sh as a user runs it (with the latchd built here, on free ports): three
# nodes elect a leader that takes a lock, every node names it through SENTINEL, and Ctrl-C
# (SIGINT) stops every node.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
latchd=$1
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$(work_dir)"

# Three client ports and the three Raft ports 1000 above them, all free right now.
base=""
for _ in $(seq 50); do
  candidate="$(free_port)"
  (( candidate + 1002 < 65536 )) || continue
  ok=1
  for p in $candidate $((candidate + 1)) $((candidate + 2)) $((candidate + 1000)) \
    $((candidate + 1001)) $((candidate + 1002)); do
    if ! python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' "$p" 2>/dev/null; then
      ok=0
      break
    fi
  done
  if (( ok )); then base=$candidate; break; fi
done
[[ -n "$base" ]] || fail "no run of free ports found"

# setsid: its own process group, so that the SIGINT below reaches the script as Ctrl-C would.
LATCHD="$latchd" BASE_PORT="$base" CLUSTER_DIR="$dir/cluster" \
  setsid bash "$root/scripts/start-cluster.sh" >"$dir/out.log" 2>&1 &
script=$!
_started_pids+=("$script")
for _ in $(seq 300); do
  grep -q 'leader on' "$dir/out.log" && break
  if ! kill -0 "$script" 2>/dev/null; then
    cat "$dir/out.log" "$dir"/cluster/node*/latchd.log
    fail "start-cluster.sh exited"
  fi
  sleep 0.1
done
grep -q 'leader on' "$dir/out.log" || { cat "$dir/out.log"; fail "no leader reported in 30 s"; }
leader="$(sed -n 's/.*leader on \([0-9]*\).*/\1/p' "$dir/out.log")"

[[ "$(redis-cli -p "$leader" SET lock:a owner NX PX 30000)" == OK ]] || fail "SET NX on the leader"
[[ -z "$(redis-cli -p "$leader" SET lock:a other NX PX 30000)" ]] || fail "second SET NX granted"
for p in $base $((base + 1)) $((base + 2)); do
  named="$(redis-cli -p "$p" SENTINEL get-master-addr-by-name latch | tr '\n' ' ')"
  [[ "$named" == "127.0.0.1 $leader " ]] || fail "node $p names '$named', not the leader $leader"
done

kill -INT -- "-$script"
for _ in $(seq 100); do kill -0 "$script" 2>/dev/null || break; sleep 0.1; done
kill -0 "$script" 2>/dev/null && fail "start-cluster.sh still runs 10 s after SIGINT"
for p in $base $((base + 1)) $((base + 2)); do
  if timeout 2 redis-cli -p "$p" PING >/dev/null 2>&1 &&
    [[ "$(timeout 2 redis-cli -p "$p" PING 2>/dev/null)" == PONG ]]; then
    fail "node on port $p still answers after SIGINT"
  fi
done
echo "PASS: start-cluster.sh"
