#!/usr/bin/env bash
# Proves scripts/sweep.sh and `trig-init sweep merge|report` on a real
# kernel history (issue 24):
#
#   scripts/proofs/sweep-proof.sh [--reduced | --long] [--search] [--vmtest] [--tree DIR] [--spins N] [--work DIR]
#
# Makes a history from Debian's linux-source-6.1: BASE, which slows
# kprobe_dispatcher() down (every kprobe BPF program runs through it),
# then 12 commits: most add a line to a text file nothing builds; commit
# 3 slows __set_task_comm() down (rename-base), commit 6 does not build,
# commit 7 fixes that and slows bpf_strncmp() down (strncmp-helper), commit
# 10 removes BASE's slowdown (a speed-up of trig-kprobe). Each slowdown is
# N (5) increments of a volatile counter. Then sweeps BASE..TIP in three
# slices, one after another (as three runners would, each starting from
# one build of BASE, restored as a CI cache is), merges them, and checks
# that the report names exactly commits 3, 7 and 10, each with its
# benchmark and its top mover (the function planted in), that commit 6 is
# skipped and commit 7 measured across it; then sweeps it again as one
# slice and checks that every figure of every commit is bit for bit the
# merged one's. Prints per-commit costs and wall times.
# --reduced (CI): 4 commits (1 the rename slowdown, 2 does not build, 3
# fixes it with the strncmp slowdown, 4 the speed-up), two slices, no
# one-slice sweep.
# --search (issue 34): then searches the range (scripts/sweep.sh --search,
# one runner, from the same seed) and checks that its report names the
# same steps, sizes and top movers, that every commit both measured has
# bit for bit the same figures, and prints the builds each needed.
# --long (issue 34; implies --search, searched first): 64 commits, three
# steps (9 the rename slowdown, 21 the strncmp slowdown fixing 20, which
# does not build, 50 the speed-up) and a drift of four commits (36 to
# 39), each adding one nop to handle_swbp() (every uprobe hit runs it:
# trig-uprobe-nop, one instruction in about 1,100 an event, below the
# threshold alone, beyond it by the third); the exhaustive sweep is one
# slice. Checks that both name the steps and the drift, and that the
# search built at most 30 commits, and prints both's builds and times.
# All use bisect-proof's tree (target/bisect-tree) and
# start BASE's build from bisect-proof's when there, so no kernel is
# built from scratch. --vmtest builds with kconfigs/vmtest.config too, as
# bisect-proof.sh --vmtest does (CI: its build then seeds BASE's without
# a config change).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
reduced=0; long=0; search=0; vmtest=0; tree=""; spins=5; work=""
while [ $# -gt 0 ]; do
  case $1 in
    --reduced) reduced=1; shift ;;
    --long) long=1; search=1; shift ;;
    --search) search=1; shift ;;
    --vmtest) vmtest=1; shift ;;
    --tree) tree=$2; shift 2 ;;
    --spins) spins=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "sweep-proof: unknown option $1" >&2; exit 2 ;;
  esac
done
tree=${tree:-$top/target/bisect-tree}
# the drift's commits, the first to the last (none without --long)
drift=(0 -1)
if [ "$reduced" = 1 ]; then
  slices=2; rename_at=1; broken_at=2; strncmp_at=3; speedup_at=4; commits=4
elif [ "$long" = 1 ]; then
  slices=1; rename_at=9; broken_at=20; strncmp_at=21; speedup_at=50; commits=64; drift=(36 39)
else
  slices=3; rename_at=3; broken_at=6; strncmp_at=7; speedup_at=10; commits=12
fi
work=${work:-$top/target/sweep-proof}
# one point of each planted path, and a bystander that none touches
benches=(--bench trig-base --bench trig-kprobe --bench rename-base --bench strncmp-helper)
[ "$long" = 0 ] || benches+=(--bench trig-uprobe-nop)
run_opts=(-- --cmp-str-len 64)
now() { date +%s; }

work=$(realpath -m "$work")
# --vmtest: the fragments' config with vmtest's, as every build's base
proof_branch "$tree" sweep-proof "$vmtest"
tree=$PWD
commit() { proof_git commit -qam "$1"; }
nop='asm volatile("nop");'
slow="{ static volatile unsigned long trig_sink; unsigned int trig_i; for (trig_i = 0; trig_i < $spins; trig_i++) trig_sink++; }"
# plant FILE PERL-PATTERN [STATEMENT]: the slowdown (or STATEMENT) as the
# first statement after the pattern (a function's opening)
plant() {
  local what=${3:-$slow}
  SLOW=$what perl -0pi -e "s/($2)/\$1\t\$ENV{SLOW}\n/" "$1"
  grep -qF "$what" "$1" || { echo "sweep-proof: could not plant into $1" >&2; exit 1; }
}
kprobe='static int kprobe_dispatcher\(struct kprobe \*kp, struct pt_regs \*regs\)\n\{\n'
plant kernel/trace/trace_kprobe.c "$kprobe"
commit "trace_kprobe: slow down kprobe_dispatcher by $spins volatile increments (planted BASE)"
declare -A planted
for k in $(seq 1 "$commits"); do
  case $k in
    "$rename_at")
      plant fs/exec.c 'void __set_task_comm\(struct task_struct \*tsk, const char \*buf, bool exec\)\n\{\n'
      commit "exec: slow down __set_task_comm (planted)"
      planted[$(git rev-parse HEAD)]="rename-base regressed __set_task_comm" ;;
    "$broken_at")
      echo "this is not C;" >>kernel/sys.c
      commit "sys: a commit that does not build (planted)"
      broken=$(git rev-parse HEAD) ;;
    "$strncmp_at")
      sed -i '/^this is not C;$/d' kernel/sys.c
      plant kernel/bpf/helpers.c 'BPF_CALL_3\(bpf_strncmp, const char \*, s1, u32, s1_sz, const char \*, s2\)\n\{\n'
      commit "bpf: fix the build; slow down bpf_strncmp (planted)"
      planted[$(git rev-parse HEAD)]="strncmp-helper/len=64 regressed bpf_strncmp" ;;
    "$speedup_at")
      SLOW=$slow perl -0pi -e 's/\t\Q$ENV{SLOW}\E\n//' kernel/trace/trace_kprobe.c
      ! grep -qF "$slow" kernel/trace/trace_kprobe.c || { echo "sweep-proof: could not remove BASE's slowdown" >&2; exit 1; }
      commit "trace_kprobe: remove BASE's slowdown of kprobe_dispatcher (planted speed-up)"
      planted[$(git rev-parse HEAD)]="trig-kprobe improved kprobe_dispatcher" ;;
    *)
      if [ "$k" -ge "${drift[0]}" ] && [ "$k" -le "${drift[1]}" ]; then
        plant kernel/events/uprobes.c 'static void handle_swbp\(struct pt_regs \*regs\)\n\{\n' "$nop"
        [ "$(grep -cF "$nop" kernel/events/uprobes.c)" = $((k - drift[0] + 1)) ] ||
          { echo "sweep-proof: handle_swbp should hold $((k - drift[0] + 1)) nops" >&2; exit 1; }
        commit "uprobes: one nop more in handle_swbp (planted drift)"
        continue
      fi
      echo "harmless change $k" >>Documentation/trig-sweep-proof.txt
      git add -f Documentation/trig-sweep-proof.txt
      commit "Documentation: harmless change $k" ;;
  esac
done
range="$(git rev-parse --short=12 "sweep-proof~$commits")..$(git rev-parse --short=12 sweep-proof)"
git log --oneline --reverse "sweep-proof~$((commits + 1))..sweep-proof"

# one build of BASE that every slice starts from, restored where it was
# built, as a CI runner restores its cache: kbuild's tools record their
# build directory's absolute path, so a copy elsewhere rebuilds objtool
# and with it every object objtool checked (about half the kernel).
# It starts from bisect-proof's build when there (a commit near BASE), in
# place, so no kernel is built from scratch; seed.path says where the
# seed was built, to restore it there.
git_dir=$(git rev-parse --absolute-git-dir)
state=$git_dir/trig-sweep
seed=$state/seed
mkdir -p "$state"
build=$(sweep_build "$state")
rm -rf "$state"/build-*
if [ -d "$seed" ]; then
  rm -rf "$build"
  cp -a "$seed" "$build"    # an earlier proof's, built at this path
elif [ -d "$git_dir/trig-bisect/build" ]; then
  build=$git_dir/trig-bisect/build
else
  rm -rf "$build"
fi
git checkout -q "sweep-proof~$commits"
t0=$(now)
"$top/scripts/build-kernel.sh" "$tree" "${proof_base[@]}" --out "$build" >/dev/null 2>"$state/seed.log" ||
  { echo "sweep-proof: BASE does not build; see $state/seed.log" >&2; exit 1; }
seed_s=$(( $(now) - t0 ))
git checkout -q sweep-proof
rm -rf "$seed"
cp -a "$build" "$seed"
echo "$build" >"$state/seed.path"
echo "sweep-proof: every slice starts from BASE's build in $build (built in $seed_s s)"

rm -rf "$work"
mkdir -p "$work"
# search_sweep: the search of the range into $work/search, timed
search_sweep() {
  local t0; t0=$(now)
  rm -rf "$build"
  cp -a "$seed" "$build"
  "$top/scripts/sweep.sh" "$tree" "$range" --search --out "$work/search" --build "$build" \
    "${proof_base[@]}" "${benches[@]}" "${run_opts[@]}"
  echo "search $(( $(now) - t0 ))" >>"$work/times"
}
# --long searches first: its figures come before the longer exhaustive
# sweep's (icount: the order changes no figure)
[ "$long" = 0 ] || search_sweep
# sweep NAME K/N: one slice into $work/NAME, timed
sweep() {
  local t0; t0=$(now)
  rm -rf "$build"
  cp -a "$seed" "$build"
  "$top/scripts/sweep.sh" "$tree" "$range" --slice "$2" --out "$work/$1" --build "$build" \
    "${proof_base[@]}" "${benches[@]}" "${run_opts[@]}"
  echo "$1 $(( $(now) - t0 ))" >>"$work/times"
}
for k in $(seq 1 "$slices"); do
  sweep "slice-$k" "$k/$slices"
done
"$trig" sweep merge -o "$work/merged" "$work"/slice-*
set +e
"$trig" sweep report "$work/merged" --format markdown --export-json "$work/report.json" >"$work/report.md"
rc=$?
set -e
cat "$work/report.md" | sed -n '1,/^### /p' | sed '$d'
[ $rc -eq 1 ] || { echo "sweep-proof: FAILED: report exit $rc, not 1 (a step regressed)" >&2; exit 1; }

fail=0
# every step: "COMMIT BENCH VERDICT TOPMOVER", one line per benchmark moved
found=$(jq -r '.steps[] | .commit as $c | .moved[] | "\($c) \(.bench) \(.verdict) \(.top_mover[0] // "none") \(.change_pct) \(.per_event)"' "$work/report.json")
echo "--- steps found (commit, benchmark, verdict, top mover, %, insn/event)"
echo "$found"
if [ "$(awk '{print $1}' <<<"$found" | sort -u | wc -l)" != 3 ] || [ "$(wc -l <<<"$found")" != 3 ]; then
  echo "sweep-proof: FAILED: not exactly three steps of one benchmark each" >&2; fail=1
fi
for c in "${!planted[@]}"; do
  want=${planted[$c]}
  got=$(awk -v c="$c" '$1 == c { print $2, $3, $4 }' <<<"$found")
  if [ "$got" = "$want" ]; then
    echo "sweep-proof: OK: ${c:0:12} $want"
  else
    echo "sweep-proof: FAILED: ${c:0:12} should be '$want', found '${got:-nothing}'" >&2; fail=1
  fi
done
skipped=$(jq -r --arg b "$broken" '.commits[] | select(.commit == $b) | .status' "$work/report.json")
across=$(jq -r --arg b "$broken" '.steps[] | select(any(.across[]; . == $b)) | .commit' "$work/report.json")
if [ "$skipped" = skipped ] && [ -n "$across" ]; then
  echo "sweep-proof: OK: ${broken:0:12} (does not build) skipped, ${across:0:12} measured across it"
else
  echo "sweep-proof: FAILED: the broken commit is '$skipped', steps across it: '${across:-none}'" >&2; fail=1
fi

# each drift as "SINCE AT BENCH", commits as indices in the range (BASE 0)
drifts_of() {
  jq -r '(.commits | map(.commit)) as $all
    | def at($c): $all | to_entries | map(select(.value == $c))[0].key;
    .drifts[] | at(.since) as $s | at(.commit) as $c | .moved[] | "\($s) \($c) \(.bench)"' "$1"
}
# check_drift NAME REPORT-JSON: with --long, the one planted drift, since
# before its first nop, at its third or later; otherwise none
check_drift() {
  local d since at bench
  d=$(drifts_of "$2")
  echo "--- $1's drifts (since, at, benchmark): ${d:-none}"
  if [ "$long" = 0 ]; then
    [ -z "$d" ] || { echo "sweep-proof: FAILED: $1 names a drift" >&2; fail=1; }
    return
  fi
  read -r since at bench <<<"$d"
  if [ "$(wc -l <<<"$d")" = 1 ] && [ "$bench" = trig-uprobe-nop ] && [ "$since" -lt "${drift[0]}" ] &&
    [ "$at" -ge $((drift[0] + 2)) ]; then
    echo "sweep-proof: OK: $1 names the drift of trig-uprobe-nop, since commit $since at $at (nops at ${drift[0]} to ${drift[1]})"
  else
    echo "sweep-proof: FAILED: $1 should name one drift of trig-uprobe-nop over commits ${drift[0]} to ${drift[1]}" >&2; fail=1
  fi
}
check_drift "the sweep" "$work/report.json"

# the figures of every benchmark (samples, summaries, costs, profiles):
# what the merge (or the search) must not change; the files differ in
# times and paths
figures() { jq -S '[.runs[].report.results[]]' "$1"; }
if [ "$reduced" = 0 ] && [ "$long" = 0 ]; then
  sweep one 1/1
  same=0; differ=0
  for f in "$work"/one/*.json; do
    name=$(basename "$f")
    [ "$name" = sweep.json ] && continue
    if cmp -s <(figures "$f") <(figures "$work/merged/$name"); then
      same=$((same + 1))
    else
      differ=$((differ + 1)); echo "sweep-proof: FAILED: $name's figures differ between one slice and the merge" >&2
    fi
  done
  [ $differ -eq 0 ] || fail=1
  echo "sweep-proof: $same commits' figures bit for bit equal between one slice and three merged, $differ differ"
fi

if [ "$search" = 1 ]; then
  [ "$long" = 1 ] || search_sweep
  set +e
  "$trig" sweep report "$work/search" --format json >"$work/search.json"
  rc=$?
  set -e
  [ $rc -eq 1 ] || { echo "sweep-proof: FAILED: the search's report exit $rc, not 1" >&2; fail=1; }
  searched=$(jq -r '.steps[] | .commit as $c | .moved[] | "\($c) \(.bench) \(.verdict) \(.top_mover[0] // "none") \(.change_pct) \(.per_event)"' "$work/search.json")
  if [ "$searched" = "$found" ]; then
    echo "sweep-proof: OK: the search names the same $(wc -l <<<"$found") steps, sizes and top movers"
  else
    echo "sweep-proof: FAILED: the search found" >&2; echo "$searched" >&2; fail=1
  fi
  same=0; differ=0
  for f in "$work"/search/[0-9]*.json; do
    if cmp -s <(figures "$f") <(figures "$work/merged/$(basename "$f")"); then
      same=$((same + 1))
    else
      differ=$((differ + 1)); echo "sweep-proof: FAILED: $(basename "$f")'s figures differ between the search and the sweep" >&2
    fi
  done
  [ $differ -eq 0 ] || fail=1
  check_drift "the search" "$work/search.json"
  tried=$(find "$work/search" -maxdepth 1 \( -name '[0-9]*.json' -o -name '*.skip' \) | wc -l)
  echo "sweep-proof: the search built $tried of $((commits + 1)) commits ($same measured with the sweep's figures bit for bit, $differ differ)"
  [ "$long" = 0 ] || [ "$tried" -le 30 ] || { echo "sweep-proof: FAILED: the search built $tried commits (at most 30)" >&2; fail=1; }
fi

echo "--- costs (s)"
# --reduced makes no one-slice sweep: only the logs that exist (pipefail)
for f in "$work"/slice-*/sweep.log "$work"/one/sweep.log "$work"/search/sweep.log; do
  if [ -f "$f" ]; then cat "$f"; fi
done | grep -E "built in [0-9]+ s, booted" |
  awk '{ b += $4; t += $8; n++ } END { if (n) printf "per commit over %d: build %.0f, boot %.0f, together %.0f\n", n, b/n, t/n, (b+t)/n }'
echo "first build of each slice (from the seed):"
for d in "$work"/slice-*; do head -n 2 "$d/sweep.log" | tail -n 1; done
awk -v seed="$seed_s" '/^slice/ { s += $2; n++; if ($2 > m) m = $2 } /^one/ { o = $2 } /^search/ { q = $2 }
  END { printf "slices one after another: %d s; the longest slice (%d runners): %d s; one slice: %s s; the search: %s s; seed build %d s\n", s, n, m, o == "" ? "-" : o, q == "" ? "-" : q, seed }' "$work/times"
[ $fail -eq 0 ] || exit 1
echo "sweep-proof: OK"
