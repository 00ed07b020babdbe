#!/usr/bin/env bash
# The search's cost on a simulated merge window (issue 34): 12,000 commits,
# ten steps, 20 seeds; no builds. Prints rounds and boots for 1, 4 and 16
# runners (examples/sweep-search-sim.rs) and checks the targets on the
# worst seed: at most 200 boots with any of them, at most 6 rounds with 16.
# Exit 1 when missed.
#
#   scripts/bench/sweep-search-sim.sh [COMMITS STEPS SEEDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(cargo run -q --release --example sweep-search-sim -- "$@")
echo "$out"
# the table's rows: runners, rounds (worst, mean), boots (worst, mean)
awk '$1 ~ /^(1|4|16)$/ && NF == 5 && $4 > 200 { print "sweep-search-sim: " $1 " runners needed " $4 " boots (target 200)"; bad = 1 }
  $1 == 16 && NF == 5 && $2 > 6 { print "sweep-search-sim: 16 runners needed " $2 " rounds (target 6)"; bad = 1 }
  END { exit bad }' <<<"$out" >&2
echo "sweep-search-sim: OK"
