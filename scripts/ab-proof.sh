#!/usr/bin/env bash
# Reproduces the README's figures for interleaved comparisons: one kernel
# booted as A, A again, and A with a known slowdown of growing size
# injected into some benchmarks (a ladder), all interleaved N times over
# the whole trigger and rename matrices; then
#   - A/A: how many benchmarks compare flags, paired and unpaired, the
#     per-boot CV against the CV of paired ratios, and how wide the change
#     intervals are both ways;
#   - the ladder: for each injected benchmark and size, the measured change
#     of rate and overhead and its verdict, and the smallest change flagged.
#
#   scripts/ab-proof.sh [KERNEL] [--meter icount|time] [--runs N] [--ladder S,S,...]
#                       [--also KERNEL]... [--results DIR] [-- RUN-OPTIONS]
#     icount (the default): debian:6.1.0, 1 boot a kernel, ladder 1,2,4
#       spins, the whole matrix at the icount defaults;
#     time: 6 interleaved runs, ladder 2,8,32, RUN-OPTIONS
#       --filter 'trig-*' --filter 'rename-*' -w 0 -d 1.
# Spins go into the producers of trig-rawtp, trig-kprobe, trig-fentry,
# rename-rawtp and rename-kprobe only, never into their baselines, so the
# overhead figures move by exactly the spins' cost. --also boots more
# kernels in the same rounds, each compared with the first A. --results DIR
# re-analyses an earlier run instead of booting.
set -euo pipefail
cd "$(dirname "$0")/.."
kernel=debian:6.1.0; meter=icount; runs=""; results=""; also=(); ladder=""
run_opts=(); opts_given=0
injected=(trig-rawtp trig-kprobe trig-fentry rename-rawtp rename-kprobe)
while [ $# -gt 0 ]; do
  case $1 in
    --meter) meter=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --also) also+=("$2"); shift 2 ;;
    --ladder) ladder=$2; shift 2 ;;
    --) shift; run_opts=("$@"); opts_given=1; break ;;
    *) kernel=$1; shift ;;
  esac
done
if [ "$meter" = time ]; then
  runs=${runs:-6}; ladder=${ladder:-2,8,32}
  [ "$opts_given" = 1 ] || run_opts=(--filter 'trig-*' --filter 'rename-*' -w 0 -d 1)
else
  # one boot decides under icount; one spin is the smallest slowdown
  runs=${runs:-1}; ladder=${ladder:-1,2,4}
fi
trig=${TRIG_INIT:-target/trig-init}
if [ -z "$results" ]; then
  results=results/ab-proof-$(date +%Y%m%dT%H%M%S)
  mkdir -p "$results"
  ks=(-k "$kernel" -k "$kernel"); appends=(--kernel-append '' --kernel-append '')
  for a in "${also[@]}"; do ks+=(-k "$a"); appends+=(--kernel-append ''); done
  for s in ${ladder//,/ }; do
    ks+=(-k "$kernel")
    appends+=(--kernel-append "trig.inject=$(printf "%s:$s," "${injected[@]}" | sed 's/,$//')")
  done
  start=$(date +%s)
  "$trig" ab "${ks[@]}" "${appends[@]}" --meter "$meter" --runs "$runs" --out "$results" -q -- \
    "${run_opts[@]}" >"$results/ab.txt" || true
  echo "ab-proof: $(( ${#ks[@]} / 2 )) boots a round, $runs rounds in $(( $(date +%s) - start )) s" | tee "$results/time.txt"
fi
k() { ls "$results"/*-k"$1".json; }
last=$(ls "$results"/*-k*.json | sed 's/.*-k\([0-9]*\)\.json/\1/' | sort -n | tail -n 1)
for n in $(seq 2 "$last"); do
  "$trig" compare "$(k 1)" "$(k "$n")" >"$results/c1$n.txt" || true
  "$trig" compare "$(k 1)" "$(k "$n")" --format json >"$results/c1$n-paired.json" || true
done
"$trig" compare "$(k 1)" "$(k 2)" --format json --unpaired >"$results/c12-unpaired.json" || true
python3 - "$results" "$last" <<'PY'
import json, sys, statistics as st
d, last = sys.argv[1], int(sys.argv[2])
load = lambda n: json.load(open(f"{d}/{n}.json"))
def flagged(c):
    return [b["name"] + " (" + "/".join(b["basis"]) + ")" for b in c["benches"]
            if b["verdict"] in ("regressed", "improved")]
def metrics(c, metric):
    return [m for b in c["benches"] for m in b["metrics"] if m["metric"] == metric]
def width(c, metric):
    w = [m["ci_pct"][1] - m["ci_pct"][0] for m in metrics(c, metric) if m["ci_pct"][0] is not None]
    return st.median(w) if w else float("nan")
def ratio_cv(m):
    r = [n / b for b, n in zip(m["base"]["values"], m["new"]["values"]) if b]
    return st.stdev(r) / st.mean(r) if len(r) > 1 else float("nan")
def aa_max(c, metric):
    ch = [abs(m["change_pct"]) for m in metrics(c, metric) if m["change_pct"] is not None]
    return max(ch) if ch else float("nan")
p, u = load("c12-paired"), load("c12-unpaired")
print(f"A/A: {sum(1 for b in p['benches'] if b['metrics'])} benchmarks judged, "
      f"{p['base']['runs']} + {p['new']['runs']} boots, meter {p['meter']}, "
      f"threshold {p['limits']['threshold_pct']}%")
for metric in ("rate", "overhead"):
    print(f"  largest A/A change, {metric}: {aa_max(p, metric):.5f}%")
for name, c in (("paired", p), ("unpaired", u)):
    print(f"  {name:<8}: flagged {len(flagged(c))}: {', '.join(flagged(c)) or '-'}")
    print(f"            median 95% interval width: rate {width(c, 'rate'):.1f} points, "
          f"overhead {width(c, 'overhead'):.1f} points")
for metric in ("rate", "overhead"):
    ms = metrics(p, metric)
    if ms:
        side = st.median(m[s]["cv"] for m in ms for s in ("base", "new"))
        pair = st.median(ratio_cv(m) for m in ms)
        print(f"  {metric}: median per-boot CV {side * 100:.1f}%, median CV of paired A/A ratios {pair * 100:.1f}%")
rows, smallest = [], {}
for n in range(3, last + 1):
    c = load(f"c1{n}-paired")
    inj = dict(i.split(":") for i in ",".join(c["new"]["inject"]).split(",") if ":" in i)
    if not inj:
        print(f"k{n} ({', '.join(c['new']['releases'])}): flagged {', '.join(flagged(c)) or '-'}")
        continue
    hits = sorted(b["name"] for b in c["benches"] if b["verdict"] in ("regressed", "improved"))
    exact = "exactly the injected" if hits == sorted(inj) else "NOT exactly the injected"
    print(f"k{n} ({','.join(sorted(set(inj.values())))} spins): flagged {len(hits)}: {exact}")
    for b in c["benches"]:
        if b["name"] not in inj:
            if b["verdict"] in ("regressed", "improved"):
                print(f"  NOT injected but flagged in k{n}: {b['name']} {b['verdict']}")
            continue
        for m in b["metrics"]:
            hit = m["verdict"] in ("regressed", "improved")
            rows.append((b["name"], int(inj[b["name"]]), m["metric"], m["change_pct"], m["ci_pct"], m["p"], m["verdict"]))
            if hit:
                key = (b["name"], m["metric"])
                smallest[key] = min(smallest.get(key, 1e9), abs(m["change_pct"]))
print("ladder (injected spins per call; change of the median, 95% CI, Wilcoxon p, verdict):")
for name, spins, metric, ch, ci, pv, v in sorted(rows):
    ci = f"[{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci[0] is not None else "[-]"
    pv = f"p={pv:.3f}" if pv is not None else "counted"
    print(f"  {name:<14} {spins:>3} spins {metric:<8} {ch:+8.3f}% {ci:<18} {pv} {v}")
for metric in ("rate", "overhead"):
    got = {n: v for (n, m), v in smallest.items() if m == metric}
    print(f"smallest change flagged ({metric}): " +
          (", ".join(f"{n} {v:.2f}%" for n, v in sorted(got.items())) or "none"))
PY
