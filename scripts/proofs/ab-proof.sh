#!/usr/bin/env bash
# Reproduces docs/compare.md's figures for interleaved comparisons ("How
# far the verdicts can be trusted here"): one kernel booted as A, A again,
# and A with a known slowdown of growing size injected into some
# benchmarks (a ladder), all interleaved N times over
# the whole trigger and rename matrices; then
#   - A/A: how many benchmarks compare flags, paired and unpaired, the
#     per-boot CV against the CV of paired ratios, and how wide the change
#     intervals are both ways;
#   - the ladder: for each injected benchmark and size, the measured change
#     of rate and overhead and its verdict, and the smallest change flagged.
#
#   scripts/proofs/ab-proof.sh [KERNEL] [--meter icount|time] [--runs N] [--ladder S,S,...]
#                       [--also KERNEL]... [--inject BENCH,...] [--profile]
#                       [--results DIR] [-- RUN-OPTIONS]
#     e.g. a short run of a few benchmarks:
#       scripts/proofs/ab-proof.sh --ladder 1 -- --filter trig-base --filter trig-kprobe
#     icount (the default): debian:6.1.0, 1 boot a kernel, ladder 1,2,4
#       spins, the whole matrix at the icount defaults;
#     time: 6 interleaved runs, ladder 2,8,32, RUN-OPTIONS
#       --filter 'trig-*' --filter 'rename-*' -w 0 -d 1.
# Spins go into the producers of trig-rawtp, trig-kprobe, trig-fentry,
# rename-rawtp and rename-kprobe only (--inject names others), never into
# their baselines, so the overhead figures move by exactly the spins' cost;
# the benchmarks not injected show what an injection elsewhere moves.
# --profile boots profiled (ab --profile), so the kernel's instructions per
# event can be checked not to move with the spins. --also boots more
# kernels in the same rounds, each compared with the first A. --results DIR
# re-analyses an earlier run instead of booting. The analysis is
# `trig-init ab-proof DIR` (init/analysis/ab_proof.rs); DIR/c1N.txt keep
# compare's table of the first kernel against each other.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
kernel=debian:6.1.0; meter=icount; runs=""; results=""; also=(); ladder=""
run_opts=(); opts_given=0; ab_opts=()
injected=(trig-rawtp trig-kprobe trig-fentry rename-rawtp rename-kprobe)
while [ $# -gt 0 ]; do
  case $1 in
    --meter) meter=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --also) also+=("$2"); shift 2 ;;
    --ladder) ladder=$2; shift 2 ;;
    --profile) ab_opts+=(--profile); shift ;;
    --inject) IFS=, read -r -a injected <<<"$2"; shift 2 ;;
    --) shift; run_opts=("$@"); opts_given=1; break ;;
    -h|--help) sed -n '2,/^set -/{/^set -/d; s/^# \{0,1\}//; p}' "$0"; exit 0 ;;
    -*) echo "ab-proof: unknown option $1 (--help)" >&2; exit 2 ;;
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
  "$trig" ab "${ks[@]}" "${appends[@]}" --meter "$meter" --runs "$runs" --out "$results" -q \
    "${ab_opts[@]}" -- \
    "${run_opts[@]}" >"$results/ab.txt" || true
  echo "ab-proof: $(( ${#ks[@]} / 2 )) boots a round, $runs rounds in $(( $(date +%s) - start )) s" | tee "$results/time.txt"
fi
k() { ls "$results"/*-k"$1".json; }
last=$(ls "$results"/*-k*.json | sed 's/.*-k\([0-9]*\)\.json/\1/' | sort -n | tail -n 1)
for n in $(seq 2 "$last"); do
  "$trig" compare "$(k 1)" "$(k "$n")" >"$results/c1$n.txt" || true
done
# the A/A figures and the ladder, from the same comparisons in-process
"$trig" ab-proof "$results"
