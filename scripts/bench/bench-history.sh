#!/bin/bash
# How long `history` and `report` take on long histories: writes synthetic
# histories of the whole matrix (examples/synth-history.rs: one boot a
# night, flat but for 0.01% of noise and three steps) of 500, 1,000 and
# 2,000 nights, or of the NIGHTS given, and prints the seconds of each
# command. Time should grow linearly with the nights.
#
#   scripts/bench/bench-history.sh [--meter icount|time] [NIGHTS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
meter=icount
if [ "${1:-}" = --meter ]; then meter=$2; shift 2; fi
nights=("$@")
[ ${#nights[@]} -gt 0 ] || nights=(500 1000 2000)
cargo build --release --quiet --bin trig-init --example synth-history
bin=target/x86_64-unknown-linux-gnu/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds() { # COMMAND...: its wall-clock seconds, its output thrown away
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || [ $? -eq 1 ] # 1: a regression found, not a failure
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
printf '%-8s %-7s %8s %10s %10s\n' NIGHTS METER MB HISTORY_S REPORT_S
for n in "${nights[@]}"; do
  "$bin/examples/synth-history" "$work/h$n" "$n" "$meter"
  mb=$(du -sm "$work/h$n" | cut -f1)
  h=$(seconds "$bin/trig-init" history "$work/h$n")
  r=$(seconds "$bin/trig-init" report "$work/h$n" -o "$work/report.html")
  printf '%-8s %-7s %8s %10.2f %10.2f\n' "$n" "$meter" "$mb" "$h" "$r"
  rm -rf "$work/h$n"
done
