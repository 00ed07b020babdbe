#!/usr/bin/env bash
# Measures every commit of a range once (issue 24):
#
#   scripts/sweep.sh TREE BASE..TIP [--slice K/N] [--out DIR] [--bench GLOB]
#                    [--base tinyconfig|defconfig|CONFIG] [--build DIR]
#                    [--seed-build DIR] [--make VAR=VALUE] [--no-profile] [--cache]
#                    [--search [--runners N] [--round K/N]] [--require-profile] [-- RUN-OPTIONS]
#
# Builds BASE and each commit of BASE..TIP (with --slice K/N every N-th
# of them from the K-th, so that N runners split the range) in the git
# tree TREE, incrementally in one build directory per slice, boots each
# once under the icount meter (profiled when the plugin is built, as
# bisect.sh: a QEMU older than 9.2 cannot load the plugin, said once
# before the first build, and the boots measure unprofiled, or with
# --require-profile it stops (exit 2); --bench as bisect.sh: default the
# whole matrix) and writes
# into DIR (default ./sweep-K-of-N) DIR/INDEX-COMMIT12.json, or
# INDEX-COMMIT12.skip with why a commit did not build or boot (never
# fatal: the report measures across it), beside the manifest sweep.json.
# Then: `trig-init sweep merge -o ALL DIR...` joins the slices and
# `trig-init sweep report ALL` names the commits where a benchmark
# stepped (docs/sweep.md).
# --build DIR: the slice's build directory (default
# TREE/.git/trig-sweep/build-K-of-N); --seed-build DIR: when that does not
# exist yet, start it as a copy of DIR (a build of a nearby commit), so
# that the first build is incremental too; a build restored at the path
# it was built at (a CI cache) is incremental on the whole, a copy
# elsewhere rebuilds objtool and what it checked. --make passes a
# make variable to scripts/build-kernel.sh (--make CC="ccache gcc").
# --cache boots with `vm --cache` instead of --profile (simulated caches:
# `sweep report --metric l1d-misses`, `cycles`, ...; several times slower).
# --search (issue 34): instead of every commit, the commits `trig-init
# sweep next DIR --runners N` asks for, round after round until it asks
# for none (BASE and TIP, then halving each interval whose ends differ;
# default DIR ./sweep-search); `sweep report DIR` then names every step.
# --round K/N: one round only, and of it every N-th commit from the K-th,
# so that N runners share a round (examples/sweep-search.yml).
# TREE is left on the commit it was on. Exit: 0 done (whatever was
# skipped), 2 usage or a tree that cannot be swept.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
usage() { sed -n '3,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
tree=$(cd "$1" && pwd) || usage
range=$2
shift 2
slice=1/1; search=0; runners=1; part=""; out=""; benches=(); base=tinyconfig; build=""; seed=""; make_vars=(); profile=auto; require=0; run_opts=()
while [ $# -gt 0 ]; do
  case $1 in
    --slice) slice=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bench) benches+=(--filter "$2"); shift 2 ;;
    --base) base=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --seed-build) seed=$2; shift 2 ;;
    --make) make_vars+=("$2"); shift 2 ;;
    --no-profile) profile=no; shift ;;
    --cache) profile=cache; shift ;;
    --search) search=1; shift ;;
    --runners) runners=$2; shift 2 ;;
    --round) part=$2; shift 2 ;;
    --require-profile) require=1; shift ;;
    --) shift; run_opts=("$@"); break ;;
    *) echo "sweep.sh: unknown option $1" >&2; usage ;;
  esac
done
if [ -n "$part" ]; then
  k=${part%/*}; n=${part#*/}
  [[ $part =~ ^[0-9]+/[0-9]+$ ]] && [ "$k" -ge 1 ] && [ "$k" -le "$n" ] && [ "$search" = 1 ] ||
    { echo "sweep.sh: --round must be K/N with 1 <= K <= N, with --search; not '$part'" >&2; exit 2; }
fi
[ -x "$trig" ] || { echo "sweep.sh: no trig-init at $trig (scripts/build.sh)" >&2; exit 2; }
case $profile in
  no) want="" ;;
  cache) want=--cache ;;
  *) want=--profile ;;
esac
profiling sweep.sh qemu-system-x86_64 "$want" "$require" || exit 2
name=${slice/\//-of-}
[ "$search" = 1 ] && name=search
out=${out:-$PWD/sweep-$name}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
git_dir=$(git -C "$tree" rev-parse --absolute-git-dir) || exit 2
build=${build:-$git_dir/trig-sweep/build-$name}
if [ ! -d "$build" ] && [ -n "$seed" ]; then
  [ -d "$seed" ] || { echo "sweep.sh: no seed build directory $seed" >&2; exit 2; }
  mkdir -p "$(dirname "$build")"
  # -a keeps the objects' times, which make compares with the sources'
  cp -a "$seed" "$build" || exit 2
  # kbuild's tools record the absolute path they were built at
  stamp="$build/tools/objtool/.fixdep.o.cmd"
  if [ -f "$stamp" ] && ! grep -qF "$build/" "$stamp"; then
    echo "sweep.sh: the seed was built at another path than $build: kbuild rebuilds objtool there," \
      "and with it every object objtool checked (about half a build); restore it where it was built" \
      "(as a CI cache is), or give that path as --build" | tee -a "$out/sweep.log" >&2
  fi
fi
# a checkout would carry them to every commit measured
git -C "$tree" diff --quiet HEAD -- ||
  { echo "sweep.sh: $tree has uncommitted changes; commit or stash them" >&2; exit 2; }
log="$out/sweep.log"
if [ "$search" = 1 ]; then
  [ "$slice" = 1/1 ] || { echo "sweep.sh: --search takes no --slice" >&2; exit 2; }
  "$trig" sweep plan "$tree" "$range" --search --out "$out" || exit 2
  plan=search
else
  plan=$("$trig" sweep plan "$tree" "$range" --slice "$slice" --out "$out") || exit 2
fi
if [ -z "$plan" ]; then
  # more slices than commits: the manifest alone says this slice is done
  echo "sweep.sh: $range slice $slice takes no commit of the range; nothing to measure" | tee -a "$log" >&2
  exit 0
fi
head=$(git -C "$tree" symbolic-ref -q --short HEAD || git -C "$tree" rev-parse HEAD) || exit 2
trap 'git -C "$tree" checkout -q "$head"' EXIT
# the search: `sweep next` and measure, until it asks for nothing
search_rounds() {
  local round=0 next
  echo "sweep.sh: searching $range into $out ($runners runners a round), building in $build" | tee -a "$log" >&2
  while next=$("$trig" sweep next "$out" --runners "$runners") || exit 2; [ -n "$next" ]; do
    if [ -n "$part" ]; then
      next=$(awk -v k="$k" -v n="$n" 'NR % n == k % n' <<<"$next")
      echo "sweep.sh: this round's part $part: $(grep -c . <<<"$next") commits" | tee -a "$log" >&2
      [ -z "$next" ] || measure "$next"
      return
    fi
    round=$((round + 1))
    echo "sweep.sh: round $round: $(wc -l <<<"$next") commits" | tee -a "$log" >&2
    measure "$next"
  done
  echo "sweep.sh: search done after $round rounds, $(find "$out" -maxdepth 1 \( -name '[0-9]*.json' -o -name '*.skip' \) | wc -l) commits tried" | tee -a "$log" >&2
}
# measure PLAN: builds and boots each `COMMIT STEM` line of PLAN
measure() {
while read -r commit stem; do
  rm -f "$out/$stem.json" "$out/$stem.skip"
  t0=$(now)
  if ! git -C "$tree" checkout -q --detach "$commit"; then
    echo "not checked out (git checkout failed)" >"$out/$stem.skip"
    continue
  fi
  img=$(build_commit "$tree" "$build" "$out/$stem.build.log" --base "$base" ${make_vars[@]+-- "${make_vars[@]}"})
  built=$?
  t1=$(now)
  if [ $built -ne 0 ]; then
    echo "build failed ($(grep -m1 -E 'error|Error' "$out/$stem.build.log" | cut -c1-200))" >"$out/$stem.skip"
    echo "$stem: build failed in $((t1 - t0)) s -> skipped" | tee -a "$log" >&2
    continue
  fi
  rm -f "$out/$stem.build.log"
  runs="$out/.vm-$stem"
  rm -rf "$runs"
  "$trig" vm -q -k "$img" --commit "$commit" --meter icount --runs 1 --out "$runs" "${profile_flag[@]}" \
    -- "${benches[@]}" "${run_opts[@]}" >/dev/null 2>"$out/$stem.vm.err"
  vm=$?
  outcome=$(vm_outcome $vm)
  t2=$(now)
  results=("$runs"/*.json)
  if [ "$outcome" = usage ]; then
    echo "sweep.sh: trig-init vm refused the options (exit 2): $(tail -n 2 "$out/$stem.vm.err")" | tee -a "$log" >&2
    exit 2
  fi
  if [ "$outcome" = noboot ] || [ ! -f "${results[0]}" ]; then
    # the console logs stay in $runs
    echo "did not boot or report (trig-init vm exit $vm: $(tail -n 1 "$out/$stem.vm.err" | cut -c1-200))" >"$out/$stem.skip"
    echo "$stem: built in $((t1 - t0)) s, did not boot or report -> skipped" | tee -a "$log" >&2
  else
    mv "${results[0]}" "$out/$stem.json"
    rm -rf "$out/$stem.vm.err" "$runs"
    echo "$stem: built in $((t1 - t0)) s, booted in $((t2 - t1)) s" | tee -a "$log" >&2
  fi
done <<<"$1"
}
if [ "$search" = 1 ]; then
  search_rounds
else
  echo "sweep.sh: $range slice $slice: $(wc -l <<<"$plan") commits into $out, building in $build" | tee -a "$log" >&2
  measure "$plan"
fi
exit 0
