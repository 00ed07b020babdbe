#!/usr/bin/env bash
# Reproduces the README's noise figures for interleaved comparisons:
# three kernels that are one and the same (A, A, and A with known
# slowdowns injected into some benchmarks), booted interleaved N times each
# over the trigger and rename matrices; then
#   - A/A: how many benchmarks compare flags, paired and unpaired, and how
#     wide the change intervals are both ways;
#   - A/A+inject: which injected slowdowns are flagged, and how big each was.
#
#   scripts/ab-proof.sh [KERNEL] [--runs N] [--results DIR]   (default debian:6.1.0-54, 5)
# --results DIR re-analyses an earlier run instead of booting.
set -euo pipefail
cd "$(dirname "$0")/.."
kernel=debian:6.1.0-54; runs=5; results=""
inject=trig-tp:1,trig-rawtp:2,trig-kprobe:5,trig-kretprobe:10,trig-fentry:20,trig-fexit:40,rename-kprobe:5,rename-rawtp:20
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    *) kernel=$1; shift ;;
  esac
done
trig=target/trig-init
if [ -z "$results" ]; then
  results=results/ab-proof-$(date +%Y%m%dT%H%M%S)
  "$trig" ab -k "$kernel" -k "$kernel" -k "$kernel" \
    --kernel-append '' --kernel-append '' --kernel-append "trig.inject=$inject" \
    --runs "$runs" --out "$results" -q -- --filter 'trig-*' --filter 'rename-*' -w 1 -d 2 >/dev/null || true
fi
k() { ls "$results"/*-k"$1".json; }
for pair in "1 2" "1 3"; do
  set -- $pair
  "$trig" compare "$(k "$1")" "$(k "$2")" --format json >"$results/c$1$2-paired.json" || true
  "$trig" compare "$(k "$1")" "$(k "$2")" --format json --unpaired >"$results/c$1$2-unpaired.json" || true
done
"$trig" compare "$(k 1)" "$(k 3)" >"$results/c13.txt" || true
python3 - "$results" <<'PY'
import json, sys, statistics as st
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}/{n}.json"))
def flagged(c):
    return [b["name"] + " (" + "/".join(b["basis"]) + ")" for b in c["benches"] if b["verdict"] in ("regressed", "improved")]
def widths(c, metric):
    w = [m["ci_pct"][1] - m["ci_pct"][0] for b in c["benches"] for m in b["metrics"]
         if m["metric"] == metric and m["ci_pct"][0] is not None]
    return st.median(w) if w else float("nan")
def judged(c):
    return sum(1 for b in c["benches"] if b["metrics"])
for pair, label in (("c12", "A/A"), ("c13", "A/A+inject")):
    p, u = load(pair + "-paired"), load(pair + "-unpaired")
    print(f"{label}: {judged(p)} benchmarks judged, {p['base']['runs']} + {p['new']['runs']} boots")
    for name, c in (("paired", p), ("unpaired", u)):
        print(f"  {name:<8}: flagged {len(flagged(c))}: {', '.join(flagged(c)) or '-'}")
        print(f"            median 95% interval width: rate {widths(c, 'rate'):.1f} points, overhead {widths(c, 'overhead'):.1f} points")
c = load("c13-paired")
inj = c["new"]["inject"]
print(f"injected: {', '.join(inj)}")
for b in c["benches"]:
    spins = [i.split(':')[1] for i in ",".join(inj).split(",") if i.split(":")[0] == b["name"]]
    if spins:
        r = {m["metric"]: m for m in b["metrics"]}
        fmt = lambda m: f"{m['change_pct']:+.1f}% [{m['ci_pct'][0]:+.1f},{m['ci_pct'][1]:+.1f}] p={m['p']:.3f} {m['verdict']}" if m else "-"
        print(f"  {b['name']:<16} {spins[0]:>3} spins: rate {fmt(r.get('rate'))}; overhead {fmt(r.get('overhead'))}")
PY
