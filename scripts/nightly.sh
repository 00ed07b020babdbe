#!/usr/bin/env bash
# A nightly job on a kernel tree: build, run the matrix N times, append to
# a history directory, compare with the previous night, report.
#
#   scripts/nightly.sh KERNEL-TREE [--history DIR] [--runs N] [--bench GLOB]...
#                      [--base tinyconfig|defconfig|CONFIG] [--build DIR] [--fetch] [-- RUN-OPTIONS]
#
# Writes DIR/<release>-<time>.json (the night's results, with the commit),
# DIR/latest.md (tonight against the previous night, markdown for a CI
# comment), DIR/changepoints.md (new change points over the whole history,
# with GOOD/BAD commits to hand to scripts/bisect.sh) and DIR/report.html.
# Exit: compare's status (0 nothing regressed, 1 regressed, 2 bad input),
# 1 also for a new change point for the worse, 3 when the kernel does not
# build or boot.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
trig=${TRIG_INIT:-$(dirname "$here")/target/trig-init}
[ $# -ge 1 ] || { echo "usage: $0 KERNEL-TREE [--history DIR] [--runs N] [--bench GLOB]... [--base B] [--fetch] [-- RUN-OPTIONS]" >&2; exit 2; }
tree=$(cd "$1" && pwd) || exit 2
shift
history=$PWD/history; runs=3; base=tinyconfig; fetch=0; filters=(); run_opts=(); build=$tree/build-trig-nightly
while [ $# -gt 0 ]; do
  case $1 in
    --history) history=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --bench) filters+=(--filter "$2"); shift 2 ;;
    --base) base=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --fetch) fetch=1; shift ;;
    --) shift; run_opts=("$@"); break ;;
    *) echo "nightly.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$history"
if [ "$fetch" = 1 ]; then
  git -C "$tree" pull --ff-only || { echo "nightly.sh: git pull failed" >&2; exit 3; }
fi
commit=$(git -C "$tree" rev-parse HEAD)
image=$("$here/build-kernel.sh" "$tree" --base "$base" --out "$build" | tail -n 1)
[ -f "$image" ] || { echo "nightly.sh: kernel at ${commit:0:12} does not build" >&2; exit 3; }

"$trig" vm -k "$image" --runs "$runs" --commit "$commit" --out "$history" -- "${filters[@]}" "${run_opts[@]}"
vm=$?
[ $vm -lt 3 ] || { echo "nightly.sh: kernel at ${commit:0:12} did not boot or report (exit $vm)" >&2; exit 3; }

status=0
if [ "$(ls "$history"/*.json 2>/dev/null | wc -l)" -ge 2 ]; then
  "$trig" compare --previous "$history" --format markdown -o "$history/latest.md"
  status=$?
fi
"$trig" history "$history" --git "$tree" --format markdown >"$history/changepoints.md"
cp_status=$?
[ $cp_status -eq 1 ] && [ $status -eq 0 ] && status=1
"$trig" report "$history" --git "$tree" -o "$history/report.html"
exit $status
