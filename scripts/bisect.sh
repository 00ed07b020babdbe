#!/usr/bin/env bash
# What `git bisect run` calls inside a kernel tree: is this commit slower
# than GOOD on the chosen benchmarks?
#
#   git bisect start BAD GOOD
#   git bisect run /path/to/trig-init/scripts/bisect.sh --bench 'rename-*' --threshold 5
#
# Options: --bench GLOB (repeatable; default all), --meter icount|time
# (icount: instructions counted under TCG, one boot per kernel decides;
# time: for KVM hosts), --threshold PCT (default the meter's: 0.25 for
# icount, 3 for time), --metric M (compare's: rate, overhead, kernel,
# traps, syscalls, ...; default rate and overhead), --runs N boots per kernel (icount 1; time 6, the
# fewest with which the paired test can reach p < 0.05), --base
# tinyconfig|defconfig|CONFIG, --state DIR (default .git/trig-bisect),
# --no-profile, -- RUN-OPTIONS (default: icount's windows, -w 0.02 -d 0.1
# --min-counts 10000; time -w 0 -d 2). Under icount the boots are profiled (`vm --profile`, when the
# plugin is built; `vm --cache` for the metrics only it counts: loads,
# stores, *-misses, cycles) and the first call prints where BAD's extra
# instructions went, function by function.
#
# The first call builds GOOD and BAD (in this tree and build directory,
# restoring the commit under test), and refuses to bisect (exit 255, which
# stops `git bisect run`) unless compare finds BAD regressed against GOOD
# beyond the threshold on some benchmark. Every call then builds the
# current commit incrementally, boots GOOD and it interleaved (A B A B
# ...), compares them paired by round, and calls the commit bad when its
# change on BAD's regressed benchmarks is typically more than half of BAD's.
# GOOD's image and BAD's signature are kept in the state directory for
# the range `git bisect start` was given; another range starts afresh.
# Exit: 0 good, 1 bad, 125 skip (does not build or boot), 255 stop; an
# internal error is 125 or 255, never 1.
# No `set -u` or `-e`: git bisect run reads exit 1 as "bad", so a script
# error must never end the script; every exit below is deliberate.
set -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
benches=(); threshold=""; metric=""; runs=""; meter=icount; base=tinyconfig; state=""; run_opts=(); profile=auto
while [ $# -gt 0 ]; do
  case $1 in
    --bench) benches+=(--filter "$2"); shift 2 ;;
    --meter) meter=$2; shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    --metric) metric=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --state) state=$2; shift 2 ;;
    --no-profile) profile=no; shift ;;
    --) shift; run_opts=("$@"); break ;;
    *) echo "bisect.sh: unknown option $1" >&2; exit 255 ;;
  esac
done
if [ "$meter" = time ]; then
  runs=${runs:-6}
  [ ${#run_opts[@]} -gt 0 ] || run_opts=(-w 0 -d 2)
else
  runs=${runs:-1}
fi
[ -x "$trig" ] || { echo "bisect.sh: no trig-init at $trig (scripts/build.sh)" >&2; exit 255; }
want=""
if [ "$meter" = icount ] && [ "$profile" = auto ]; then
  case $metric in
    loads|stores|l1i-misses|l1d-misses|ll-misses|cycles) want=--cache ;;
    *) want=--profile ;;
  esac
fi
# git bisect run: 255 stops the bisect (no --require-profile here: never)
profiling bisect.sh qemu-system-x86_64 "$want" 0 || exit 255
tree=$(git rev-parse --show-toplevel) || exit 255
state=${state:-$(git rev-parse --absolute-git-dir)/trig-bisect}
mkdir -p "$state"
build="$state/build"
log="$state/steps.log"

# Builds the checked-out commit incrementally; prints the image path.
build_here() {
  build_commit "$tree" "$build" "$state/build.log" --base "$base"
}

# compare's movers in a comparison's JSON (with --profile), each with
# its top source lines where the kernel had DWARF; names from the kernel
# are anyone's text: control characters shown as "?"
movers_of() {
  jq -r 'def r: . * 100 | round / 100; def s: (if . >= 0 then "+" else "" end) + (r | tostring);
    def t: gsub("[[:cntrl:]]"; "?");
    .benches[] | select(.movers) | "\(.name | t): \(.movers.total | s) insn/event, kernel \(.movers.kernel | s)",
      (.movers.functions[:5][] | "  \(.name | t) \(.change | s) (\(.base | r) -> \(.new | r))",
        (.lines[]? | "    \(.file | t):\(.line // .base_line)\(if .line then "" else " (BASE)" end) \(.change | s)"))' "$1"
}

# Boots GOOD's image and $1 interleaved and compares them paired; leaves
# compare.json and compare.txt in runs/$2. Returns 125 when the new kernel
# did not boot or report, 255 when trig-init vm refused the command line
# (this script's options: no commit is to blame).
judge() {
  local image=$1 name=$2
  local out="$state/runs/$name"
  rm -rf "$out"; mkdir -p "$out"
  "$trig" vm -q -k "$state/good.img" -k "$image" --meter "$meter" --runs "$runs" --out "$out" "${profile_flag[@]}" \
    -- "${benches[@]}" "${run_opts[@]}" >/dev/null 2>"$out/vm.err"
  local vm=$?
  case $(vm_outcome $vm) in
    usage) echo "bisect.sh: trig-init vm refused the options (exit 2): $(tail -n 2 "$out/vm.err")" >&2; return 255 ;;
    noboot) echo "bisect.sh: $name did not boot or report (trig-init vm exit $vm): $(tail -n 2 "$out/vm.err")" >&2; return 125 ;;
  esac
  "$trig" compare "$out"/*-k1.json "$out"/*-k2.json ${threshold:+--threshold "$threshold"} ${metric:+--metric "$metric"} --color never \
    -o "$out/compare.txt" --export-json "$out/compare.json" >&2
  [ $? -le 1 ] || return 125
  return 0
}

# What BAD's regression looks like: every (benchmark, metric) that
# compare judged regressed, with its change, as one JSON object; {} when
# BAD is not worse (trig-init bisect effect).
signature() {
  "$trig" bisect effect "$1"
}

# A step is bad when, over BAD's regressed benchmarks, its change is
# typically more than half of BAD's: a classification against the known
# effect, steadier than a fresh significance test at every step
# (trig-init bisect verdict, which prints "good|bad|skip: why"). Prints
# why; returns 0 good, 1 bad, 125 skip (the comparison cannot be read or
# measured none of BAD's benchmarks), and 255 when trig-init gave no
# verdict: its own exit status is never passed on, so that neither a
# usage error (2) nor a panic (101) reads as "bad".
classify() {
  local out
  out=$("$trig" bisect verdict --effect "$state/bad-signature.json" "$1") ||
    { echo "trig-init bisect verdict failed (exit $?)"; return 255; }
  case $out in
    "good: "*) echo "${out#good: }"; return 0 ;;
    "bad: "*) echo "${out#bad: }"; return 1 ;;
    "skip: "*) echo "${out#skip: }"; return 125 ;;
    *) echo "no verdict in: $out"; return 255 ;;
  esac
}

# The range this bisect started from: the good and bad commits that
# `git bisect log` lists before its first `git bisect start` (the refs
# under refs/bisect move as steps are judged). State from another range
# is not reused.
range=$(git bisect log 2>/dev/null | sed -n '/^git bisect start/q; s/^# \(good\|bad\): \[\([0-9a-f]*\)\].*/\1 \2/p')
good=$(awk '$1 == "good" { print $2; exit }' <<<"$range")
bad=$(awk '$1 == "bad" { print $2; exit }' <<<"$range")
[ -n "$good" ] && [ -n "$bad" ] || { echo "bisect.sh: run me from 'git bisect run' after 'git bisect start BAD GOOD'" >&2; exit 255; }
key="good $good bad $bad"
if [ "$(cat "$state/range" 2>/dev/null)" != "$key" ]; then
  rm -f "$state/good.img" "$state/bad.img" "$state/bad-signature.json"
fi

if [ ! -f "$state/good.img" ]; then
  head=$(git rev-parse HEAD)
  trap 'git checkout -q --detach "$head"' EXIT
  t0=$(now)
  for which in good bad; do
    git checkout -q --detach "${!which}" || exit 255
    img=$(build_here) || { echo "bisect.sh: ${which^^} (${!which:0:12}) does not build; see $state/build.log" >&2; exit 255; }
    cp "$img" "$state/$which.img"
  done
  git checkout -q --detach "$head"
  trap - EXIT
  t1=$(now)
  judge "$state/bad.img" bad-check || { echo "bisect.sh: BAD cannot be measured against GOOD (above); stopping" >&2; exit 255; }
  signature "$state/runs/bad-check/compare.json" >"$state/bad-signature.json" ||
    { echo "bisect.sh: cannot read BAD's comparison ($state/runs/bad-check/compare.json)" >&2; exit 255; }
  echo "prepare: built GOOD and BAD in $((t1 - t0)) s, boots and compare in $(( $(now) - t1 )) s, BAD regressed: $(cat "$state/bad-signature.json")" >>"$log"
  # compare's movers of BAD against GOOD (with --profile): where to look
  movers=$(movers_of "$state/runs/bad-check/compare.json")
  if [ -n "$movers" ]; then
    movers="BAD against GOOD, where the instructions went per event (compare's movers):"$'\n'"$movers"
    echo "bisect.sh: $movers" >&2
    echo "$movers" >>"$log"
  fi
  if [ "$(cat "$state/bad-signature.json")" = "{}" ]; then
    echo "bisect.sh: no regression between GOOD (${good:0:12}) and BAD (${bad:0:12}) beyond ${threshold:-the meter threshold}${threshold:+%} on the chosen benchmarks; refusing to bisect (see $state/runs/bad-check/compare.txt)" >&2
    rm -f "$state/good.img"
    exit 255
  fi
  echo "$key" >"$state/range"
fi

commit=$(git rev-parse HEAD)
t0=$(now)
if ! img=$(build_here); then
  echo "step ${commit:0:12}: build failed in $(( $(now) - t0 )) s -> skip" >>"$log"
  exit 125
fi
cp "$img" "$state/current.img"
t1=$(now)
judge "$state/current.img" "${commit:0:12}"
verdict=$?
[ $verdict -ne 255 ] || exit 255
why="did not boot"
if [ $verdict -eq 0 ]; then
  why=$(classify "$state/runs/${commit:0:12}/compare.json")
  verdict=$?
  # anything else (trig-init failed or printed no verdict) is this
  # script's fault: stop
  case $verdict in
    0|1|125) ;;
    *) echo "bisect.sh: internal error classifying ${commit:0:12} (exit $verdict): $why" >&2; exit 255 ;;
  esac
fi
word=$([ $verdict -eq 0 ] && echo good || { [ $verdict -eq 1 ] && echo bad || echo skip; })
echo "step ${commit:0:12}: build $((t1 - t0)) s, boots and compare $(( $(now) - t1 )) s: $why -> $word" >>"$log"
# a bad step's movers, source lines included: the last one's say where
# the first bad commit slowed the kernel
if [ $verdict -eq 1 ]; then
  movers_of "$state/runs/${commit:0:12}/compare.json" 2>/dev/null | sed 's/^/  /' >>"$log" || true
fi
echo "bisect.sh: ${commit:0:12}: $why -> $word" >&2
exit $verdict
