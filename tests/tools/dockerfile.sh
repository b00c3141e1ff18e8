#!/usr/bin/env bash
# packaging/Dockerfile without Docker (no daemon, no network on CI): its build stage must
# install every Debian package the build needs (scripts/deps.sh's BUILD_PACKAGES but the
# test, benchmark and demo ones), both stages sit on Debian 12, latchd runs as a non-root
# user, and the image's ENTRYPOINT arguments and HEALTHCHECK command work: latchd started
# with the ENTRYPOINT's arguments (conf/latchd.conf in place of /etc/latch/latchd.conf) is
# checked healthy by the HEALTHCHECK's own command line, with and without LATCH_PASSWORD.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
latchd=$1
src="$(cd "$(dirname "$0")/../.." && pwd)"
dockerfile="$src/packaging/Dockerfile"
dir="$(work_dir)"

# The Dockerfile with its line continuations joined.
joined="$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$dockerfile")"

# --- base images and user
froms="$(grep -E '^FROM ' <<<"$joined" | awk '{print $2}')"
[[ "$(wc -l <<<"$froms")" -eq 2 ]] || fail "two stages expected: $froms"
while read -r image; do
  [[ "$image" =~ ^debian:12(-slim)?$ ]] || fail "base image $image is not Debian 12"
done <<<"$froms"
user="$(grep -E '^USER ' <<<"$joined" | tail -1 | awk '{print $2}')"
[[ -n "$user" && "$user" != root && "$user" != 0 ]] || fail "runs as '$user'"

# --- the build stage installs what the build needs
build_stage="$(awk '/^FROM /{n++} n==1' <<<"$joined")"
installed="$(grep -oE 'apt-get install [^&]*' <<<"$build_stage" | tr ' ' '\n')"
# shellcheck disable=SC1090
source <(sed -n '/^BUILD_PACKAGES=(/,/^)/p' "$src/scripts/deps.sh")
for package in "${BUILD_PACKAGES[@]}"; do
  case "$package" in
    libgtest-dev | libgmock-dev | libbenchmark-dev | libpq-dev) continue ;;  # tests, bench, demo
  esac
  grep -qx "$package" <<<"$installed" || fail "the build stage does not install $package"
done
grep -q 'LATCH_BUILD_TESTS=OFF' <<<"$build_stage" || fail "the image build compiles the tests"
runtime_stage="$(awk '/^FROM /{n++} n==2' <<<"$joined")"
grep -qE 'apt-get install .*redis-tools' <<<"$runtime_stage" ||
  fail "the image lacks redis-cli for its HEALTHCHECK"

# --- ENTRYPOINT and HEALTHCHECK against a real latchd
entry="$(grep -E '^ENTRYPOINT ' <<<"$joined" | sed 's/^ENTRYPOINT //')"
mapfile -t argv < <(python3 -c 'import json,sys; print("\n".join(json.loads(sys.argv[1])))' "$entry")
[[ "${argv[0]}" == latchd && "${argv[1]}" == /etc/latch/latchd.conf ]] || fail "ENTRYPOINT ${argv[*]}"
health="$(grep -E '^HEALTHCHECK ' <<<"$joined" | sed 's/.* CMD //')"
[[ "$health" == *"redis-cli -p 6380"*ping* ]] || fail "HEALTHCHECK: $health"
grep -qE '^port 6380$' "$src/conf/latchd.conf" || fail "conf/latchd.conf does not listen on 6380"

run_latchd() {  # run_latchd PORT EXTRA-ARGS...: the ENTRYPOINT, port moved off 6380; sets pid
  local port=$1
  shift
  "$latchd" "$src/conf/latchd.conf" "${argv[@]:2}" --port "$port" --dir "$dir" "$@" \
    >"$dir/latchd-$port.log" 2>&1 &
  pid=$!
  _started_pids+=("$pid")
}
port="$(free_port)"
run_latchd "$port"
wait_ready latchd "$port" "$pid" "$dir/latchd-$port.log"
probe="${health//6380/$port}"
sh -c "$probe" || fail "HEALTHCHECK failed on a healthy latchd"
kill "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
! sh -c "$probe" 2>/dev/null || fail "HEALTHCHECK passed with latchd stopped"

port="$(free_port)"
run_latchd "$port" --requirepass 's3 cret'
for _ in $(seq 150); do
  [[ "$(timeout 2 redis-cli -p "$port" ping 2>&1)" == *NOAUTH* ]] && break
  sleep 0.1
done
probe="${health//6380/$port}"
! sh -c "$probe" 2>/dev/null || fail "HEALTHCHECK passed without the password"
LATCH_PASSWORD='s3 cret' sh -c "$probe" || fail "HEALTHCHECK failed with LATCH_PASSWORD"
echo "dockerfile: ok"
