#!/usr/bin/env bash
# Prints where a whole-matrix boot's time goes, for two trig-init builds
# side by side in one run (a benchmark script, not a test): each build
# boots the same kernel under the icount meter, alternately, RUNS times,
# each with its own defaults (a build that splits a run over boots side
# by side, `vm --split`, does so here); then the wall time of each run
# (from its first boot's start to its last one's end), how many boots it
# took, its time to the first benchmark, and
# each benchmark's rate on both (under icount the figures of builds that
# differ only in setup must agree: the same instructions are counted
# inside the windows; `compare` refuses two builds on rates for that
# reason). Build BEFORE from an older checkout (scripts/build.sh there).
# Usage: scripts/bench/boot-time.sh BEFORE AFTER [KERNEL] [RUNS] [-- RUN-OPTIONS]
#   (default debian:6.1.0, 1 run; e.g. BEFORE=/tmp/old/target/trig-init)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
before=${1:?BEFORE: a trig-init binary}
after=${2:?AFTER: a trig-init binary}
kernel=${3:-debian:6.1.0}
runs=${4:-1}
shift $(( $# < 4 ? $# : 4 ))
[ "${1:-}" = "--" ] && shift
out=$(mktemp -d)
for ((r = 1; r <= runs; r++)); do
  for side in before after; do
    bin=$before; [ "$side" = after ] && bin=$after
    # one side at a time: their wall times are the figure; each side's
    # defaults (a build that splits a run over the host's cores does)
    "$bin" vm -k "$kernel" --meter icount --quiet --out "$out/$side" \
      --json "$out/$side-$r.json" -- "$@" || true
  done
done
python3 - "$out" "$runs" <<'PY'
import json, sys
out, runs = sys.argv[1], int(sys.argv[2])
import os
print(f"{'':8} {'build':>10} {'wall s':>8} {'to first benchmark s':>21} {'benchmarks':>10} {'boots':>5}")
for side in ("before", "after"):
    for r in range(1, runs + 1):
        if not os.path.exists(f"{out}/{side}-{r}.json"):
            sys.exit(f"boot-time: {side}'s boot {r} wrote no results (see above)")
        s = json.load(open(f"{out}/{side}-{r}.json"))
        run = s["runs"][0]
        n = len(run["report"]["results"]) if run.get("report") else 0
        print(f"{side:8} {(run.get('report') or {}).get('tool', {}).get('git_rev', '')[:10]:>10} {run['wall_s']:8.1f} "
              f"{run.get('boot_s') or float('nan'):21.1f} {n:10} {len(run.get('parts', [])) or 1:5}")
rate = lambda side: {b["name"]: b["summary"]["mean"]
                    for b in json.load(open(f"{out}/{side}-1.json"))["runs"][0]["report"]["results"]
                    if b["status"] == "ok"}
old, new = rate("before"), rate("after")
both = [n for n in old if n in new]
print(f"\n{'BENCHMARK':32} {'BEFORE':>12} {'AFTER':>12} {'CHANGE':>9}")
for n in both:
    print(f"{n:32} {old[n]:12.5f} {new[n]:12.5f} {100 * (new[n] / old[n] - 1):+8.3f}%")
worst = max((abs(new[n] / old[n] - 1) for n in both), default=0)
print(f"{len(both)} benchmarks ok on both; largest change {100 * worst:.3f}%; "
      f"ok on one side only: {sorted(set(old) ^ set(new)) or 'none'}")
PY
echo "results: $out"
