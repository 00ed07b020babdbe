#!/usr/bin/env bash
# A nightly job on a kernel tree: build, run the matrix N times, append to
# a history directory, compare with the previous night, alert on new
# change points, report.
#
#   scripts/nightly.sh KERNEL-TREE [--history DIR] [--runs N] [--bench GLOB]...
#                      [--arch x86_64|aarch64] [--base tinyconfig|defconfig|CONFIG]
#                      [--build DIR] [--image FILE] [--fetch] [--bmf FILE]
#                      [--repo-url URL] [--meter icount|time] [--no-profile]
#                      [--require-profile] [-- RUN-OPTIONS]
#
# --meter passes vm's meter (default vm's: time where KVM is usable, else
# icount; CI passes icount, whose figures do not depend on the runner).
# Boots are profiled (vm --profile) when the QEMU plugin is beside
# trig-init (or TRIG_INIT_PLUGIN names it) under the icount meter: the
# results then carry the kernel's instructions per event (`--metric
# kernel`), whose series survive an update of trig-init. --no-profile
# turns it off. A QEMU older than 9.2 cannot load the plugin: said once,
# before the build, and the boots measure unprofiled; --require-profile
# stops there instead (exit 2).
#
# Writes DIR/<release>-<time>.json (the night's results, with the commit),
# DIR/latest.md (tonight against the previous night, markdown for a CI
# comment), DIR/changepoints.md (change points over the whole history,
# those seen for the first time marked ALERT, with GOOD/BAD commits to hand
# to scripts/bisect.sh), DIR/alerts.json (the change points alerted on, so
# each is alerted once) and DIR/report.html; with --bmf, tonight's figures
# in Bencher Metric Format. --image boots a kernel built elsewhere instead
# of building the tree (a CI step, a test).
# Exit: 0 nothing regressed; 1 compare found a regression against the
# previous night, a change point for the worse was seen for the first
# time, or a benchmark failed; 2 usage error, or a step (compare,
# history, report) failed, e.g. a shallow clone; 3 the kernel did not
# build or boot. Every step runs whatever the others found, so the history
# and the report are complete when the job fails.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
usage="usage: $0 KERNEL-TREE [--history DIR] [--runs N] [--bench GLOB]... [--arch A] [--base B] [--build DIR] [--image FILE] [--fetch] [--bmf FILE] [--repo-url URL] [--meter M] [--no-profile] [--require-profile] [-- RUN-OPTIONS]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
tree=$(cd "$1" && pwd) || exit 2
shift
history=$PWD/history; runs=3; base=tinyconfig; fetch=0; filters=(); run_opts=()
build=$tree/build-trig-nightly; arch=$(uname -m); image=""; bmf=""; report_opts=()
profile=1; require=0; meter=""
while [ $# -gt 0 ]; do
  case $1 in
    --history) history=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --bench) filters+=(--filter "$2"); shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --image) image=$2; shift 2 ;;
    --fetch) fetch=1; shift ;;
    --bmf) bmf=$2; shift 2 ;;
    --repo-url) report_opts+=(--repo-url "$2"); shift 2 ;;
    --meter) meter=$2; shift 2 ;;
    --no-profile) profile=0; shift ;;
    --require-profile) require=1; shift ;;
    --) shift; run_opts=("$@"); break ;;
    *) echo "nightly.sh: unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
  esac
done
vm_opts=(); qemu="qemu-system-x86_64"
case $arch in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 qemu="qemu-system-aarch64"
    vm_opts=(--arch aarch64 --init "${TRIG_INIT_AARCH64:-$top/target/aarch64-unknown-linux-musl/release/trig-init}") ;;
  *) echo "nightly.sh: unknown --arch $arch" >&2; exit 2 ;;
esac
case $meter in
  "") ;;
  icount|time) vm_opts+=(--meter "$meter") ;;
  *) echo "nightly.sh: --meter must be icount or time, not '$meter'" >&2; exit 2 ;;
esac
# a profile counts instructions: under icount, given or vm's default
want=""
if [ "$profile" = 1 ] && [ "$meter" != time ] && { [ "$meter" = icount ] || [ ! -w /dev/kvm ]; }; then
  want=--profile
fi
profiling nightly.sh "$qemu" "$want" "$require" || exit 2
vm_opts+=(${profile_flag[@]+"${profile_flag[@]}"})
# history --git orders the nights by the tree's commits: a shallow clone
# (CI's default) does not know them
if [ "$(git -C "$tree" rev-parse --is-shallow-repository)" != false ]; then
  echo "nightly.sh: $tree is a shallow clone or no git tree; fetch its whole history (actions/checkout: fetch-depth: 0; or git fetch --unshallow)" >&2
  exit 2
fi
mkdir -p "$history" || exit 2
if [ "$fetch" = 1 ]; then
  git -C "$tree" pull --ff-only || { echo "nightly.sh: git pull failed" >&2; exit 3; }
fi
commit=$(git -C "$tree" rev-parse HEAD) || exit 2
if [ -z "$image" ]; then
  image=$(build_commit "$tree" "$build" "" --arch "$arch" --base "$base") ||
    { echo "nightly.sh: kernel at ${commit:0:12} does not build" >&2; exit 3; }
fi
[ -f "$image" ] || { echo "nightly.sh: no kernel image '$image'" >&2; exit 3; }

"$trig" vm -k "$image" "${vm_opts[@]}" --runs "$runs" --commit "$commit" --out "$history" -- "${filters[@]}" "${run_opts[@]}"
vm=$?
case $(vm_outcome $vm) in
  measured) status=0 ;;
  failed) status=1; echo "nightly.sh: some benchmark failed or timed out at ${commit:0:12}; its results are recorded" >&2 ;;
  usage) echo "nightly.sh: trig-init vm: usage error (exit 2)" >&2; exit 2 ;;
  noboot) echo "nightly.sh: kernel at ${commit:0:12} did not boot or report (exit $vm)" >&2; exit 3 ;;
esac

# Each step's exit status: 0 fine, 1 a regression, anything else the
# step failed. Failures win over regressions.
failed=0
step() {
  local name=$1; shift
  "$@"
  local rc=$?
  case $rc in
    0) ;;
    1) [ $status -eq 0 ] && status=1 ;;
    *) echo "nightly.sh: $name failed (exit $rc)" >&2; failed=1 ;;
  esac
}
if [ "$(ls "$history"/*.json 2>/dev/null | grep -vc '/alerts\.json$')" -ge 2 ]; then
  step compare "$trig" compare --previous "$history" --color never --export-markdown "$history/latest.md"
  step history "$trig" history "$history" --git "$tree" --alert --format markdown >"$history/changepoints.md"
else
  echo "first night: nothing to compare with" >"$history/latest.md"
  # history's 1 says it compared nothing, which the first night cannot
  "$trig" history "$history" --git "$tree" --format markdown >"$history/changepoints.md"
  [ $? -le 1 ] || { echo "nightly.sh: history failed" >&2; failed=1; }
fi
step report "$trig" report "$history" --git "$tree" "${report_opts[@]}" -o "$history/report.html"
if [ -n "$bmf" ]; then
  # without --alert, history's 1 repeats what the step above reported
  "$trig" history "$history" --git "$tree" --format bmf >"$bmf"
  [ $? -le 1 ] || { echo "nightly.sh: BMF export failed" >&2; failed=1; }
fi
[ $failed -eq 0 ] || exit 2
exit $status
