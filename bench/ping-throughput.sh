#!/usr/bin/env bash
# Throughput of GET /ping/ping through Anvil's whole path (router → actor thread in a cell → router)
# against a raw node:http server answering the same JSON and against the bare socket hop
# (bench/socket-hop-floor.mjs), measured in the same run with wrk (Debian package `wrk`), RUNS
# times each, alternating; prints each figure and the medians.
# Usage: bench/ping-throughput.sh [seconds=10] [runs=3] [connections=50]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}; runs=${2:-3}; connections=${3:-50}
command -v wrk >/dev/null || { echo "bench: wrk is needed (apt-get install wrk)" >&2; exit 1; }
[ -f dist/cli/main.js ] || npm run build >/dev/null

data=$(mktemp -d); apis=$(mktemp -d)
mkdir -p "$apis/ping" && cp apis/ping/api.yaml "$apis/ping/"
cleanup() { kill "$anvil_pid" "$raw_pid" "$floor_pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$data" "$apis"; }
trap cleanup EXIT

node bench/raw-server.mjs 18181 >/dev/null & raw_pid=$!
node bench/socket-hop-floor.mjs 18182 >/dev/null & floor_pid=$!
ANVIL_LOG_LEVEL=warn node bin/anvil.js start --apis "$apis" --publish --data "$data" --port 18180 >/dev/null 2>&1 & anvil_pid=$!
for _ in $(seq 1 100); do curl -sf http://localhost:18180/ping/ping >/dev/null && break; sleep 0.1; done

rps() { wrk -t1 -c"$connections" -d"${seconds}s" -H 'Host: localhost' "$1" | awk '/Requests\/sec/ {print $2}'; }
rps http://127.0.0.1:18180/ping/ping >/dev/null   # warm-up: threads started, JIT warm
raw=(); floor=(); anvil=()
for i in $(seq 1 "$runs"); do
  raw+=("$(rps http://127.0.0.1:18181/)")
  floor+=("$(rps http://127.0.0.1:18182/)")
  anvil+=("$(rps http://127.0.0.1:18180/ping/ping)")
  echo "run $i: raw ${raw[-1]} req/s, socket hop alone ${floor[-1]} req/s, anvil ${anvil[-1]} req/s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
r=$(median "${raw[@]}"); f=$(median "${floor[@]}"); a=$(median "${anvil[@]}")
ratio() { awk -v x="$1" -v r="$r" 'BEGIN {printf "%.2f", x/r}'; }
echo "median: raw ${r} req/s (1.00), socket hop alone ${f} req/s ($(ratio "$f")), anvil ${a} req/s ($(ratio "$a"))"
echo "machine: $(nproc) cores, node $(node --version), $(date -u +%Y-%m-%d)"
