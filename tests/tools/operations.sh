#!/usr/bin/env bash
# Operating latchd with the usual tools (issue 11, "Operating it"), against a latchd process
# and real redis-cli: the unix socket, SLOWLOG, INFO commandstats/latencystats, MONITOR,
# CLIENT KILL/PAUSE/UNPAUSE, CONFIG REWRITE, OBJECT/MEMORY, the blocked flag, and /metrics
# parsed with prometheus_client's own parser after real traffic. Every wait is bounded.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
latchd=$1
dir="$(work_dir)"
sock="$dir/latchd.sock"
metrics_port="$(free_port)"
conf="$dir/latchd.conf"
cat >"$conf" <<CONF
# operations test: this comment must survive CONFIG REWRITE
unixsocket $sock
unixsocketperm 770
maxclients 500
# an ignored Redis directive, kept as it is
lazyfree-lazy-eviction no
CONF
LATCHD_PORT="$(free_port)"
"$latchd" "$conf" --port "$LATCHD_PORT" --bind 127.0.0.1 --metrics-port "$metrics_port" \
  >"$dir/latchd.log" 2>&1 &
pid=$!
_started_pids+=("$pid")
wait_ready latchd "$LATCHD_PORT" "$pid" "$dir/latchd.log"
cli() { timeout 10 redis-cli -p "$LATCHD_PORT" "$@"; }
ucli() { timeout 10 redis-cli -s "$sock" "$@"; }
expect() {  # expect WHAT GOT WANTED
  [[ "$2" == "$3" ]] || fail "$1: got '$2', wanted '$3'"
}
expect_match() {  # expect_match WHAT GOT REGEX
  [[ "$2" =~ $3 ]] || fail "$1: '$2' does not match /$3/"
}

# --- unixsocket / unixsocketperm
expect "ping over the unix socket" "$(ucli ping)" PONG
expect "socket mode" "$(stat -c %a "$sock")" 770
expect_match "unix client in CLIENT LIST" "$(ucli client list)" "addr=$sock:0 laddr=$sock:0 .* flags=U "
expect "CONFIG GET unixsocketperm" "$(cli config get unixsocketperm | tail -1)" 770

# --- SLOWLOG
cli config set slowlog-log-slower-than 0 >/dev/null
cli slowlog reset >/dev/null
cli set slowkey "$(printf 'v%.0s' $(seq 200))" >/dev/null
entry="$(cli slowlog get 3)"
expect_match "slowlog entry" "$entry" "set"$'\n'"slowkey"$'\n'"v{128}\.\.\. \(72 more bytes\)"
expect_match "slowlog peer" "$entry" "127\.0\.0\.1:[0-9]+"
[[ "$(cli slowlog len)" -ge 1 ]] || fail "slowlog len"
cli config set slowlog-max-len 2 >/dev/null
for i in 1 2 3 4; do cli ping >/dev/null; done
expect "slowlog-max-len trims" "$(cli slowlog len)" 2
cli config set slowlog-log-slower-than -1 >/dev/null
cli slowlog reset >/dev/null
cli ping >/dev/null
expect "slowlog off" "$(cli slowlog len)" 0

# --- INFO commandstats / latencystats and CONFIG RESETSTAT
cli config resetstat >/dev/null
for i in 1 2 3; do cli set cs:$i v >/dev/null; done
cli set >/dev/null || true                 # wrong arity: rejected
cli set cs:1 v px notanumber >/dev/null || true  # a syntax error while running: failed
stats="$(cli info commandstats | tr -d '\r')"
expect_match "cmdstat_set" "$stats" "cmdstat_set:calls=4,usec=[0-9]+,usec_per_call=[0-9]+\.[0-9]{2},rejected_calls=1,failed_calls=1"
expect_match "subcommand stats" "$stats" "cmdstat_config\|resetstat:calls=1,"
latency="$(cli info latencystats | tr -d '\r')"
expect_match "latencystats" "$latency" "latency_percentiles_usec_set:p50=[0-9]+\.[0-9]{3},p99=[0-9.]+,p99\.9=[0-9.]+"
expect_match "LATENCY HISTOGRAM" "$(cli latency histogram set config)" \
  "^set"$'\n'"calls"$'\n'"4"$'\n'"histogram_usec"$'\n'"[0-9]+"$'\n'"[0-9]+"$'\n'".*config\|resetstat"
cli config resetstat >/dev/null
[[ "$(cli info commandstats)" != *cmdstat_set:* ]] || fail "RESETSTAT left cmdstat_set"

# --- OBJECT / MEMORY
cli set enc:int 12345 >/dev/null
cli set enc:emb "$(printf 'e%.0s' $(seq 44))" >/dev/null
cli set enc:raw "$(printf 'r%.0s' $(seq 45))" >/dev/null
expect "int encoding" "$(cli object encoding enc:int)" int
expect "embstr encoding" "$(cli object encoding enc:emb)" embstr
expect "raw encoding" "$(cli object encoding enc:raw)" raw
cli set enc:small 7 >/dev/null
expect "shared integer refcount" "$(cli object refcount enc:small)" 2147483647
expect "unshared refcount" "$(cli object refcount enc:int)" 1
[[ "$(cli object idletime enc:raw)" -le 1 ]] || fail "idletime"  # 1 s clock: a tick may pass
[[ "$(cli memory usage enc:raw)" -gt 45 ]] || fail "memory usage"

# --- a parked lock waiter: flag b and blocked_clients
cli lock.acquire lk:1 holder 30000 >/dev/null
timeout 10 redis-cli -p "$LATCHD_PORT" lock.acquire lk:1 waiter 30000 WAIT 5000 >"$dir/waiter.out" &
waiter=$!
for _ in $(seq 50); do
  [[ "$(cli info clients | tr -d '\r' | grep ^blocked_clients:)" == blocked_clients:1 ]] && break
  sleep 0.1
done
expect "blocked_clients" "$(cli info clients | tr -d '\r' | grep ^blocked_clients:)" blocked_clients:1
expect_match "flag b" "$(cli client list)" "flags=b .*cmd=lock\.acquire"
cli lock.release lk:1 holder >/dev/null
wait "$waiter"
expect_match "waiter granted" "$(cat "$dir/waiter.out")" "^[0-9]+$"

# --- MONITOR (a client's command and a script's redis.call)
timeout 10 redis-cli -p "$LATCHD_PORT" monitor >"$dir/monitor.out" &
monitor=$!
for _ in $(seq 50); do [[ "$(cli client list)" == *flags=O* ]] && break; sleep 0.1; done
cli set mon:k "a b" >/dev/null
cli eval "return redis.call('get', KEYS[1])" 1 mon:k >/dev/null
ucli ping >/dev/null
for _ in $(seq 50); do grep -q '"ping"' "$dir/monitor.out" && break; sleep 0.1; done
kill "$monitor" 2>/dev/null || true
wait "$monitor" 2>/dev/null || true
mon="$(cat "$dir/monitor.out")"
expect_match "monitor client line" "$mon" '[0-9]{10}\.[0-9]{6} \[0 127\.0\.0\.1:[0-9]+\] "set" "mon:k" "a b"'
expect_match "monitor script line" "$mon" '[0-9]{10}\.[0-9]{6} \[0 lua\] "get" "mon:k"'
expect_match "monitor unix line" "$mon" "\[0 unix:$sock\] \"ping\""

# --- CLIENT KILL
/usr/bin/python3 - "$LATCHD_PORT" "$dir/victim.id" "$dir/victim.out" <<'PY' &
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"CLIENT ID\r\n")
open(sys.argv[2], "w").write(s.recv(100).decode().strip()[1:])
s.settimeout(8)
try:
    open(sys.argv[3], "w").write("closed" if s.recv(100) == b"" else "data")
except socket.timeout:
    open(sys.argv[3], "w").write("timeout")
PY
for _ in $(seq 50); do [[ -s "$dir/victim.id" ]] && break; sleep 0.1; done
victim_id="$(cat "$dir/victim.id")"
[[ -n "$victim_id" ]] || fail "no victim client"
expect "CLIENT KILL ID" "$(cli client kill id "$victim_id")" 1
for _ in $(seq 50); do [[ -s "$dir/victim.out" ]] && break; sleep 0.1; done
expect "victim closed" "$(cat "$dir/victim.out")" closed
expect "CLIENT KILL SKIPME" "$(cli client kill addr 127.0.0.1:1 skipme yes)" 0
expect "CLIENT KILL old form" "$(cli client kill 127.0.0.1:1)" "ERR No such client"
expect "CLIENT KILL USER" "$(cli client kill user nobody)" "ERR No such user 'nobody'"

# --- CLIENT PAUSE WRITE: reads run, writes wait; no lock expires meanwhile
/usr/bin/python3 - "$LATCHD_PORT" <<'PY' || fail "CLIENT PAUSE WRITE"
import socket, sys, time
def conn():
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.settimeout(5)
    return s
admin, c = conn(), conn()
def reply(s):
    """One RESP reply: a line, or a bulk string's content, or an array's lines."""
    text = b""
    while b"\r\n" not in text:
        text += s.recv(65536)
    head = text[:text.index(b"\r\n")]
    if head[:1] == b"$":
        need = text.index(b"\r\n") + 2 + int(head[1:]) + 2
    elif head[:1] == b"*":
        need = None
        while text.count(b"\r\n") < 1 + 2 * int(head[1:]):
            text += s.recv(65536)
    else:
        need = len(head) + 2
    while need is not None and len(text) < need:
        text += s.recv(65536)
    return text
def command(s, line):
    s.sendall(line + b"\r\n")
    return reply(s)
def wait_until(condition, seconds=5):  # bounded; never a sleep for a guessed time
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.005)
    return condition()
def server_ms():  # TIME, in ms
    parts = command(admin, b"TIME").split(b"\r\n")
    return int(parts[2]) * 1000 + int(parts[4]) // 1000
assert command(c, b"CLIENT SETNAME victim") == b"+OK\r\n"
assert command(admin, b"SET pause:lock owner PX 400") == b"+OK\r\n"
lease_end = int(command(admin, b"PEXPIRETIME pause:lock")[1:-2])
paused_at = time.monotonic()  # before the pause starts on the server
assert command(admin, b"CLIENT PAUSE 2000 WRITE") == b"+OK\r\n"
t = time.time(); c.sendall(b"GET pause:lock\r\n"); r = c.recv(100)
assert r == b"$5\r\nowner\r\n", r
assert time.time() - t < 1.0, "GET waited for the pause"
def expired():
    return [l for l in command(admin, b"INFO stats").split(b"\r\n")
            if l.startswith(b"expired_keys:")][0]
before = expired()
assert wait_until(lambda: server_ms() > lease_end), "the server's clock never passed the lease"
after = expired()
if time.monotonic() < paused_at + 2.0:  # still within the pause when looked at
    assert after == before, "a key expired during CLIENT PAUSE"
c.sendall(b"SET pause:k v\r\n"); r = c.recv(100)
assert r == b"+OK\r\n", r
assert time.monotonic() >= paused_at + 1.95, "SET did not wait for the pause"
assert command(admin, b"CLIENT PAUSE 5000 WRITE") == b"+OK\r\n"
c.sendall(b"SET pause:k2 v\r\n")
def victim_held():  # CLIENT LIST flags=b: the SET arrived and waits for the pause
    listing = command(admin, b"CLIENT LIST").decode()
    return any("name=victim " in l and " flags=b " in l for l in listing.split("\n"))
assert wait_until(victim_held), "the SET was never held by the pause"
assert command(admin, b"CLIENT UNPAUSE") == b"+OK\r\n"
t = time.time(); assert c.recv(100) == b"+OK\r\n"; assert time.time() - t < 2
PY

# --- CONFIG REWRITE keeps comments and unknown lines, writes the running values
cli config set maxclients 321 >/dev/null
cli config set slowlog-max-len 64 >/dev/null
expect "CONFIG REWRITE" "$(cli config rewrite)" OK
grep -q '^# operations test: this comment must survive CONFIG REWRITE$' "$conf" || fail "comment lost"
grep -q '^lazyfree-lazy-eviction no$' "$conf" || fail "ignored directive lost"
grep -q '^maxclients 321$' "$conf" || fail "maxclients not rewritten: $(cat "$conf")"
grep -q '^slowlog-max-len 64$' "$conf" || fail "slowlog-max-len not appended"
[[ "$(grep -c '^maxclients' "$conf")" == 1 ]] || fail "maxclients twice"

# --- /metrics, parsed by prometheus_client: redis_exporter's names and the lock metrics
cli lock.acquire lk:2 holder 30000 >/dev/null
timeout 10 redis-cli -p "$LATCHD_PORT" lock.acquire lk:2 waiter 30000 WAIT 100 >/dev/null
/usr/bin/python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
  "http://127.0.0.1:$metrics_port/metrics" >"$dir/metrics.txt" || fail "GET /metrics"
/usr/bin/python3 - "$dir/metrics.txt" <<'PY' || fail "metrics exposition"
import sys
from prometheus_client.parser import text_string_to_metric_families
samples = {}
for family in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in family.samples:
        samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
def v(name, **labels):
    return samples[(name, tuple(sorted(labels.items())))]
assert v("redis_up") == 1
assert v("redis_connected_clients") >= 0
assert v("redis_blocked_clients") == 0
assert v("redis_commands_processed_total") > 20
assert v("redis_memory_used_bytes") > 0
assert v("redis_db_keys", db="db0") >= 5
assert v("redis_db_keys_expiring", db="db0") >= 1
assert v("redis_commands_total", cmd="set") >= 3
assert v("redis_commands_duration_seconds_total", cmd="set") > 0
assert v("redis_commands_total", cmd="lock.acquire") >= 2
assert v("redis_uptime_in_seconds") >= 0
assert v("redis_keyspace_hits_total") >= 1
assert v("latch_lock_wait_timeouts_total") >= 1
assert v("latch_lock_wait_seconds_count") >= 2        # one granted, one timed out
assert v("latch_lock_wait_seconds_bucket", le="+Inf") == v("latch_lock_wait_seconds_count")
assert v("latch_lock_handoff_seconds_count") >= 1
assert v("latch_lock_hold_seconds_count") >= 1        # lk:1 released by its holder
assert v("latch_locks_held") == 2, v("latch_locks_held")  # lk:1 (waiter) and lk:2
PY

# --- the socket file goes away with the server
kill -TERM "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
[[ ! -e "$sock" ]] || fail "unix socket file left behind"
echo "operations: ok"
