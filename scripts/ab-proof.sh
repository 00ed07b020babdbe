#!/usr/bin/env bash
# Reproduces the README's noise figures for interleaved comparisons:
# three kernels that are one and the same (A, A, and A with known
# slowdowns injected into some benchmarks), booted interleaved N times each
# over the trigger and rename matrices; then
#   - A/A: how many benchmarks compare flags, paired and unpaired, and how
#     wide the change intervals are both ways;
#   - A/A+inject: which injected slowdowns are flagged, and how big each was.
#
#   scripts/ab-proof.sh [KERNEL] [--runs N] [--also KERNEL]... [--results DIR]
#                                 (default debian:6.1.0-54, 6 runs)
# --also boots more kernels in the same rounds (after A, A), each compared
# with the first A: real kernel comparisons under the same conditions.
# --results DIR re-analyses an earlier run instead of booting.
set -euo pipefail
cd "$(dirname "$0")/.."
kernel=debian:6.1.0-54; runs=6; results=""; also=()
inject=trig-tp:1,trig-rawtp:2,trig-kprobe:5,trig-kretprobe:10,trig-fentry:20,trig-fexit:40,rename-kprobe:5,rename-rawtp:20
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --also) also+=("$2"); shift 2 ;;
    *) kernel=$1; shift ;;
  esac
done
trig=target/trig-init
if [ -z "$results" ]; then
  results=results/ab-proof-$(date +%Y%m%dT%H%M%S)
  mkdir -p "$results"
  ks=(-k "$kernel" -k "$kernel"); appends=(--kernel-append '' --kernel-append '')
  for a in "${also[@]}"; do ks+=(-k "$a"); appends+=(--kernel-append ''); done
  ks+=(-k "$kernel"); appends+=(--kernel-append "trig.inject=$inject")
  # the syscall-driven and batched attach paths, two uprobes, all of rename
  "$trig" ab "${ks[@]}" "${appends[@]}" --runs "$runs" --out "$results" -q -- \
    --filter trig-base --filter trig-tp --filter trig-rawtp --filter 'trig-k*' --filter 'trig-f*' \
    --filter 'trig-batch-k*' --filter 'trig-batch-f*' --filter trig-usermode-count \
    --filter trig-uprobe-nop --filter 'rename-*' -w 0 -d 1 >"$results/ab.txt" || true
fi
k() { ls "$results"/*-k"$1".json; }
last=$(ls "$results"/*-k*.json | sed 's/.*-k\([0-9]*\)\.json/\1/' | sort -n | tail -n 1)
for n in $(seq 3 $((last - 1))); do
  "$trig" compare "$(k 1)" "$(k "$n")" >"$results/c1$n.txt" || true
done
for pair in "1 2" "1 $last"; do
  set -- $pair
  "$trig" compare "$(k "$1")" "$(k "$2")" --format json >"$results/c$1$2-paired.json" || true
  "$trig" compare "$(k "$1")" "$(k "$2")" --format json --unpaired >"$results/c$1$2-unpaired.json" || true
done
python3 - "$results" "$last" <<'PY'
import json, sys, statistics as st
d, last = sys.argv[1], sys.argv[2]
load = lambda n: json.load(open(f"{d}/{n}.json"))
def flagged(c):
    return [b["name"] + " (" + "/".join(b["basis"]) + ")" for b in c["benches"] if b["verdict"] in ("regressed", "improved")]
def widths(c, metric):
    w = [m["ci_pct"][1] - m["ci_pct"][0] for b in c["benches"] for m in b["metrics"]
         if m["metric"] == metric and m["ci_pct"][0] is not None]
    return st.median(w) if w else float("nan")
def judged(c):
    return sum(1 for b in c["benches"] if b["metrics"])
for pair, label in (("c12", "A/A"), (f"c1{last}", "A/A+inject")):
    p, u = load(pair + "-paired"), load(pair + "-unpaired")
    print(f"{label}: {judged(p)} benchmarks judged, {p['base']['runs']} + {p['new']['runs']} boots")
    for name, c in (("paired", p), ("unpaired", u)):
        print(f"  {name:<8}: flagged {len(flagged(c))}: {', '.join(flagged(c)) or '-'}")
        print(f"            median 95% interval width: rate {widths(c, 'rate'):.1f} points, overhead {widths(c, 'overhead'):.1f} points")
c = load(f"c1{last}-paired")
inj = c["new"]["inject"]
print(f"injected: {', '.join(inj)}")
for b in c["benches"]:
    spins = [i.split(':')[1] for i in ",".join(inj).split(",") if i.split(":")[0] == b["name"]]
    if spins:
        r = {m["metric"]: m for m in b["metrics"]}
        fmt = lambda m: f"{m['change_pct']:+.1f}% [{m['ci_pct'][0]:+.1f},{m['ci_pct'][1]:+.1f}] p={m['p']:.3f} {m['verdict']}" if m else "-"
        print(f"  {b['name']:<16} {spins[0]:>3} spins: rate {fmt(r.get('rate'))}; overhead {fmt(r.get('overhead'))}")
PY
