#!/usr/bin/env bash
# Noisy neighbour: latency of a neighbour API (GET /<neighbour>/ping, the built-in Ping) alone and
# while another API of the same instance ("hog") saturates a custom directive that spins the CPU
# for 40 ms of wall time per call (a Date.now() loop, under its limits.cpuMs: 50 so that calls
# should succeed; the hog's errors are printed), and the ratio of the two.
#
# One Anvil instance (default cells = CPUs), two APIs in a temp --apis dir; the neighbour's key is
# chosen (neighbour-0, neighbour-1, …) so that rendezvous hashing puts it in a different cell than
# the hog. The neighbour is measured with bench/latency-probe.mjs: open loop at a fixed RATE
# (undici Pool, keep-alive), latency counted from when each request was due. The hog load is
# `wrk -t1 -c16` against GET /hog/burn, started 1 s before the probe (whose first, unrecorded
# second is a warm-up) and stopped 1 s after it.
# Phases alternate (alone, with hog) RUNS times; prints each run, the medians, the p50 and p99
# ratios (with hog / alone), the hog's req/s and errors, where the CPU goes during the first hog
# phase (per process and busiest threads, from /proc: bench/cpu-snapshot.mjs), and the machine.
#
# CONTROL=1 adds, each run, the same two phases with the probe against a raw node:http server
# (bench/raw-server.mjs) instead of the neighbour: what the hog's CPU load alone does to any server
# on the machine, the floor the neighbour's ratio is to be compared with.
#
# ANVIL_ARGS adds options to `anvil start` (e.g. ANVIL_ARGS="--isolates-per-thread 1").
# Usage: [CONTROL=1] [PORT=18190] [ANVIL_ARGS=…] bench/noisy-neighbour.sh [seconds=10] [runs=3] [rate=500] [hog-connections=16]
# Needs: wrk (Debian package `wrk`), undici (devDependency). Takes about 1.5 min with the defaults
# (2.5 min with CONTROL=1). Other load on the machine skews it: see the CPU lines it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}; runs=${2:-3}; rate=${3:-500}; hog_conns=${4:-16}
port=${PORT:-18190}; control=${CONTROL:-0}
command -v wrk >/dev/null || { echo "bench: wrk is needed (apt-get install wrk)" >&2; exit 1; }
[ -f dist/cli/main.js ] && [ -f dist/cells/assign.js ] || npm run build >/dev/null

data=$(mktemp -d); apis=$(mktemp -d); tmp=$(mktemp -d)
anvil_pid=; hog_pid=; probe_pid=; raw_pid=
cleanup() {
  for pid in $probe_pid $hog_pid $raw_pid $anvil_pid; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$data" "$apis" "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
cells=$(node -p 'require("node:os").availableParallelism()')
read -r neighbour hog_cell neighbour_cell < <(node --input-type=module -e "
  import { assignCell, apiIdentity } from './dist/cells/assign.js';
  const cells = ${cells};
  const cell = (key) => assignCell(apiIdentity('localhost', 'dev', key), cells);
  const hog = cell('hog');
  let i = 0;
  while (cells > 1 && cell('neighbour-' + i) === hog && i < 1000) i++;
  console.log('neighbour-' + i, hog, cell('neighbour-' + i));
")

mkdir -p "$apis/hog/Directives" "$apis/$neighbour"
cat >"$apis/hog/api.yaml" <<'YAML'
# Burns ~40 ms of CPU per call in a custom directive (isolated-vm), under its 50 ms CPU limit.
key: hog
limits: { cpuMs: 50 }
endpoints:
  get /burn:
    Burn: { directive: Burn }
YAML
cat >"$apis/hog/Directives/Burn.js" <<'JS'
export default function (state) {
  const end = Date.now() + 40;
  while (Date.now() < end) {}
  state.message.body = { burnt: 40 };
}
JS
cat >"$apis/$neighbour/api.yaml" <<YAML
key: $neighbour
endpoints:
  get /ping:
    Ping: { directive: Ping }
YAML

ANVIL_LOG_LEVEL=warn node bin/anvil.js start --apis "$apis" --publish --data "$data" --port "$port" ${ANVIL_ARGS:-} >"$tmp/anvil.log" 2>&1 & anvil_pid=$!
base=http://127.0.0.1:$port
for _ in $(seq 1 150); do curl -sf -H 'Host: localhost' "$base/$neighbour/ping" >/dev/null && break; sleep 0.1; done
curl -sf -H 'Host: localhost' "$base/hog/burn" >/dev/null || { echo "bench: GET /hog/burn failed:" >&2; curl -s -H 'Host: localhost' "$base/hog/burn" >&2; cat "$tmp/anvil.log" >&2; exit 1; }

raw=http://127.0.0.1:$((port + 1))
if [ "$control" = 1 ]; then node bench/raw-server.mjs "$((port + 1))" >/dev/null & raw_pid=$!; fi
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
# Per-process CPU (router, each cell, probe, wrk) over 2 s, sampled from /proc.
cpu_snapshot() {
  local targets=("router=$anvil_pid") line
  while read -r line; do
    local cpid=${line%% *} cell=${line##* }
    local what=; [ "$cell" = "$hog_cell" ] && what=" (hog)"; [ "$cell" = "$neighbour_cell" ] && what="$what (neighbour)"
    targets+=("cell-$cell$what=$cpid")
  done < <(ps -o pid=,args= --ppid "$anvil_pid" | sed -n 's/^ *\([0-9]*\) .*cell-main\.js --cell \([0-9]*\).*/\1 \2/p')
  node bench/cpu-snapshot.mjs 2 "${targets[@]}" "probe=$1" "wrk=$hog_pid"
}

# Warm-up: the neighbour's thread, the hog's threads and isolates, the JIT.
node bench/latency-probe.mjs "$base/$neighbour/ping" "$rate" 2 >/dev/null
wrk -t1 -c"$hog_conns" -d3s -H 'Host: localhost' "$base/hog/burn" >/dev/null

echo "neighbour: GET /$neighbour/ping (cell $neighbour_cell of $cells) at $rate req/s open loop, ${seconds}s; hog: wrk -t1 -c$hog_conns GET /hog/burn (cell $hog_cell, ~40 ms CPU per call)"
if [ "$control" = 1 ]; then echo "control: the same probe against a raw node:http server (bench/raw-server.mjs), alone and with the hog"; fi

# phase <url> <0|1: with the hog> <snapshot: 0|1>: runs the probe (and the hog around it) and sets
# $result to the probe's line, $hog_line to the hog's figures.
phase() {
  hog_line=
  if [ "$2" = 0 ]; then result=$(node bench/latency-probe.mjs "$1" "$rate" "$seconds"); return; fi
  wrk -t1 -c"$hog_conns" -d"$((seconds + 3))s" -H 'Host: localhost' "$base/hog/burn" >"$tmp/hog.txt" & hog_pid=$!
  sleep 1
  node bench/latency-probe.mjs "$1" "$rate" "$seconds" >"$tmp/probe.txt" & probe_pid=$!
  if [ "$3" = 1 ]; then sleep "$((seconds / 2))"; cpu_snapshot "$probe_pid" >"$tmp/cpu.txt" || true; fi
  wait "$probe_pid"; probe_pid=; result=$(cat "$tmp/probe.txt")
  wait "$hog_pid"; hog_pid=
  h_rps=$(awk '/Requests\/sec/ {print $2}' "$tmp/hog.txt")
  h_req=$(awk '/requests in/ {print $1}' "$tmp/hog.txt")
  h_err=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(/,/, ""); n += $4 + $6 + $8 + $10} END {print n + 0}' "$tmp/hog.txt")
  hog_line="hog ${h_rps} req/s, ${h_err} errors of ${h_req}"
}

a50=(); a99=(); h50=(); h99=(); hrps=(); herr=(); ra50=(); ra99=(); rh50=(); rh99=()
for i in $(seq 1 "$runs"); do
  phase "$base/$neighbour/ping" 0 0
  a50+=("$(field p50 "$result")"); a99+=("$(field p99 "$result")")
  echo "run $i alone:    $result"
  phase "$base/$neighbour/ping" 1 "$([ "$i" = 1 ] && echo 1 || echo 0)"
  h50+=("$(field p50 "$result")"); h99+=("$(field p99 "$result")"); hrps+=("$h_rps"); herr+=("$h_err")
  echo "run $i with hog: $result | $hog_line"
  if [ "$control" = 1 ]; then
    phase "$raw/" 0 0
    ra50+=("$(field p50 "$result")"); ra99+=("$(field p99 "$result")")
    echo "run $i raw alone:    $result"
    phase "$raw/" 1 0
    rh50+=("$(field p50 "$result")"); rh99+=("$(field p99 "$result")")
    echo "run $i raw with hog: $result | $hog_line"
  fi
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN {printf "%.2f", x/y}'; }
m_a50=$(median "${a50[@]}"); m_a99=$(median "${a99[@]}"); m_h50=$(median "${h50[@]}"); m_h99=$(median "${h99[@]}")
m_rps=$(median "${hrps[@]}"); m_err=$(median "${herr[@]}")
echo "median alone:    p50 ${m_a50} ms, p99 ${m_a99} ms"
echo "median with hog: p50 ${m_h50} ms, p99 ${m_h99} ms; hog ${m_rps} req/s, ${m_err} errors"
echo "ratio (with hog / alone): p50 $(ratio "$m_h50" "$m_a50")x, p99 $(ratio "$m_h99" "$m_a99")x"
if [ "$control" = 1 ]; then
  r_a50=$(median "${ra50[@]}"); r_a99=$(median "${ra99[@]}"); r_h50=$(median "${rh50[@]}"); r_h99=$(median "${rh99[@]}")
  echo "control, raw node:http: alone p50 ${r_a50} ms, p99 ${r_a99} ms; with hog p50 ${r_h50} ms, p99 ${r_h99} ms; ratio p50 $(ratio "$r_h50" "$r_a50")x, p99 $(ratio "$r_h99" "$r_a99")x"
fi
cat "$tmp/cpu.txt"
echo "machine: $(nproc) cores, node $(node --version), $(date -u +%Y-%m-%d), load average at start ${load_at_start}"
