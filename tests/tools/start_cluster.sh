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
pick_base() {
  python3 - <<'PY'
import socket
for _ in range(200):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    base = probe.getsockname()[1]
    probe.close()
    if base + 1002 >= 65536:
        continue
    held = []
    try:
        for port in (base, base + 1, base + 2, base + 1000, base + 1001, base + 1002):
            held.append(socket.socket())
            held[-1].bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        for s in held:
            s.close()
    print(base)
    break
else:
    raise SystemExit(1)
PY
}

# Starts the script on free ports; 0 once it reports its leader, 2 when a port was taken
# between the check and a node's bind (another process's outgoing connection can take any
# port of the ephemeral range meanwhile: then new ports, at most 3 tries), 1 otherwise.
start_on_free_ports() {
  base="$(pick_base)" || fail "no run of free ports found"
  rm -rf "$dir/cluster" "$dir/out.log"
  # setsid: its own process group, so that SIGINT reaches the script as Ctrl-C would.
  # The issue's form: N and BASEPORT as arguments.
  LATCHD="$latchd" CLUSTER_DIR="$dir/cluster" \
    setsid bash "$root/scripts/start-cluster.sh" 3 "$base" >"$dir/out.log" 2>&1 &
  script=$!
  _started_pids+=("$script")
  for _ in $(seq 300); do
    grep -q 'leader on' "$dir/out.log" && return 0
    if ! kill -0 "$script" 2>/dev/null; then
      if grep -q -i 'address already in use' "$dir"/cluster/node*/latchd.log; then return 2; fi
      cat "$dir/out.log" "$dir"/cluster/node*/latchd.log
      return 1
    fi
    sleep 0.1
  done
  cat "$dir/out.log"
  return 1
}

for attempt in 1 2 3; do
  rc=0
  start_on_free_ports || rc=$?
  (( rc == 2 && attempt < 3 )) && { echo "a port was taken meanwhile; new ports"; continue; }
  (( rc == 0 )) || fail "start-cluster.sh did not report a leader within 30 s"
  break
done
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
