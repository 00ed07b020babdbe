#!/usr/bin/env bash
# Prints the wall time of `ab` of two kernels with --jobs 1 (one boot after
# the other) and --jobs 2 (side by side), with the host's cores and load
# beside them, and checks that both gave the same figures (a benchmark
# script, not a test: tests/boot.rs proves the figures equal).
# Usage: scripts/bench/jobs-bench.sh [KERNEL-A KERNEL-B] [-- RUN-OPTIONS]
#   (default debian:6.1.0 debian:6.12, and ten benchmarks)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
a=debian:6.1.0 b=debian:6.12
if [ $# -ge 2 ] && [ "$1" != "--" ]; then a=$1 b=$2; shift 2; fi
[ "${1:-}" = "--" ] && shift
run=("$@")
[ ${#run[@]} -eq 0 ] && for f in trig-base trig-tp trig-rawtp trig-kprobe trig-kretprobe \
  trig-fentry trig-fexit trig-uprobe-nop rename-base rename-kprobe; do run+=(--filter "$f"); done
[ -x "$trig" ] || ./scripts/build.sh >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); ab -k $a -k $b -- ${run[*]}"
for jobs in 1 2; do
  start=$(date +%s.%N)
  "$trig" ab -q --jobs "$jobs" -k "$a" -k "$b" --out "$out/j$jobs" --json "$out/j$jobs.json" \
    -- "${run[@]}" >/dev/null || true
  printf -- '--jobs %s: %.1f s wall\n' "$jobs" "$(echo "$(date +%s.%N) - $start" | bc)"
done
python3 - "$out/j1.json" "$out/j2.json" <<'PY'
import json, sys
def figures(path):
    return [[(r["name"], r.get("summary", {}).get("mean")) for r in run["report"]["results"]]
            for s in json.load(open(path)) for run in s["runs"] if run.get("report")]
one, two = figures(sys.argv[1]), figures(sys.argv[2])
print("figures of --jobs 2 " + ("identical to" if one == two else "DIFFER from") + " --jobs 1")
PY
