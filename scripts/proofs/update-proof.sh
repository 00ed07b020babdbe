#!/usr/bin/env bash
# Proves with real boots that results survive an update of trig-init
# (issue 26): the kernel's instructions per event (--metric kernel,
# kernel-overhead) carry a nightly history across a new trig-init build,
# where the rate's series split.
#
#   scripts/proofs/update-proof.sh [--nights N] [--spin N] [KERNEL-A [KERNEL-B]]
#
# Builds a second trig-init that differs from HEAD only in user space: a
# fixed spin of N (16) iterations after every call of the producers' loop
# (sampler::produce), committed in a scratch git worktree of HEAD
# (target/update-proof/tree, removed at the end) and built there with
# scripts/build.sh into its own target (target/update-proof/target, kept
# between runs, first filled from this checkout's). Then boots a history
# into target/update-proof/history, one `vm --meter icount --profile` boot
# a night of trig-base, trig-kprobe, rename-base and rename-kprobe: N (3)
# nights of this checkout's build on KERNEL-A, N of the spun build on
# KERNEL-A (the update), N of the spun build on KERNEL-B (the kernel step).
# KERNEL-A and KERNEL-B default to the GOOD and BAD images that
# scripts/proofs/bisect-proof.sh leaves (target/bisect-tree/.git/trig-bisect/
# good.img, bad.img: BAD has its slowdown planted in __set_task_comm).
# KERNEL-B must be KERNEL-A with a few more instructions in
# __set_task_comm, which every rename-* benchmark goes through: a step on
# the common path, so in both rename benchmarks' kernel counts and in
# neither's kernel count over its baseline. Checks, with `trig-init
# history`, that on --metric kernel every change point is at the first
# night on KERNEL-B and in a rename benchmark (at least one), none at the
# update; that --metric kernel-overhead finds none at the update; and that
# the rate's series break at the update (a build-only break). Prints each
# night's figures and what was found. Exit 0 when all holds, 1 when not, 2
# on bad usage or missing kernels.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
nights=3; spin=16; kernels=()
while [ $# -gt 0 ]; do
  case $1 in
    --nights) nights=$2; shift 2 ;;
    --spin) spin=$2; shift 2 ;;
    -*) echo "update-proof: unknown option $1" >&2; exit 2 ;;
    *) kernels+=("$1"); shift ;;
  esac
done
pair=$top/target/bisect-tree/.git/trig-bisect
a=${kernels[0]:-$pair/good.img}
b=${kernels[1]:-$pair/bad.img}
for k in "$a" "$b"; do
  [ -f "$k" ] && continue
  echo "update-proof: no kernel $k. Give KERNEL-A and KERNEL-B, B the same tree with a slowdown in __set_task_comm:" \
    "scripts/proofs/bisect-proof.sh leaves such a pair as $pair/good.img and bad.img" >&2
  exit 2
done
work=$top/target/update-proof
tree=$work/tree
hist=$work/history
# the checkout's build below, whatever TRIG_INIT names: its update is the proof
trig=$top/target/trig-init
cd "$top"
git diff --quiet HEAD -- init bpf build.rs Cargo.toml Cargo.lock ||
  echo "update-proof: note: this checkout differs from HEAD; the update will differ by more than the spin" >&2

mkdir -p "$work"
echo "update-proof: building this checkout's trig-init"
scripts/build.sh >"$work/build.log" 2>&1 || { echo "update-proof: scripts/build.sh failed, see $work/build.log" >&2; exit 1; }

# the spun build, in a scratch worktree of HEAD with a target of its own
mkdir -p "$work/target"
if [ ! -e "$work/target/plugin" ]; then
  built=$(readlink target/trig-init)
  cp -a "target/${built%%/*}" target/plugin target/musl-support "$work/target/" 2>/dev/null || true
fi
git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
git worktree prune
git worktree add -q --detach "$tree" HEAD
trap 'git -C "$top" worktree remove --force "$tree" 2>/dev/null || true' EXIT
ln -s ../target "$tree/target"
SPIN=$spin perl -0pi -e 's/(        for _ in 0\.\.inner \{\n            trigger\(\);\n)/$1            spin($ENV{SPIN});\n/' "$tree/init/guest/sampler/mod.rs"
proof_git -C "$tree" commit -qam "producers: a spin of $spin after every call (update-proof)"
changed=$(git -C "$tree" diff --name-only HEAD~1)
[ "$changed" = init/guest/sampler/mod.rs ] || { echo "update-proof: the spin patch did not apply to sampler::produce alone: '$changed'" >&2; exit 1; }
git -C "$tree" show --stat --format='update: %h %s' HEAD | sed 's/^/  /'
git -C "$tree" diff -U1 HEAD~1 | sed -n '/^@@/,$p' | sed 's/^/  /'
echo "update-proof: building the spun trig-init"
(cd "$tree" && scripts/build.sh) >"$work/spun-build.log" 2>&1 ||
  { echo "update-proof: the spun build failed, see $work/spun-build.log" >&2; exit 1; }
spun=$work/trig-init-spun
cp "$tree/target/trig-init" "$spun"

rm -rf "$hist"
mkdir -p "$hist"
filters=(--filter trig-base --filter trig-kprobe --filter rename-base --filter rename-kprobe)
night=0
boot() { # LABEL KERNEL INIT
  night=$((night + 1))
  local t0=$SECONDS
  "$trig" vm -q -k "$2" --init "$3" --meter icount --profile --runs 1 --commit "$1-n$night" --out "$hist" -- "${filters[@]}" ||
    { echo "update-proof: night $night ($1) failed, see $hist" >&2; exit 1; }
  echo "  night $night: $1 ($((SECONDS - t0)) s)"
}
echo "update-proof: $nights nights each of: this build on A, the spun build on A (the update), the spun build on B (the kernel step)"
start=$SECONDS
for _ in $(seq "$nights"); do boot build1-kA "$a" "$trig"; done
for _ in $(seq "$nights"); do boot build2-kA "$a" "$spun"; done
for _ in $(seq "$nights"); do boot build2-kB "$b" "$spun"; done
echo "update-proof: $((nights * 3)) boots in $((SECONDS - start)) s"

# each night's figures
echo "--- per night and benchmark"
jq -s -r '["night", "label", "trig-init", "benchmark", "M/Ginsn", "kernel-insn/event", "over-baseline"],
  (sort_by(.created) | to_entries[] | .key as $i | .value as $s | $s.runs[0].report.results as $rs
   | $rs[] | . as $b | ($rs | map(select(.name == $b.overhead_ns.baseline)) | first) as $base
   | [$i + 1, $s.kernel.commit, $s.runs[0].report.tool.git_rev, $b.name,
      ($b.summary.mean * 1e5 | round / 1e5), ($b.profile.kernel * 1e3 | round / 1e3),
      (if $base then ($b.profile.kernel - $base.profile.kernel) * 1e3 | round / 1e3 else "-" end)])
  | @tsv' "$hist"/*.json | column -t

echo "--- at the update (night $nights -> $((nights + 1))) and at the kernel step (night $((2 * nights)) -> $((2 * nights + 1)))"
jq -s -r --argjson u "$nights" '
  def r4: . * 1e4 | round / 1e4;
  def over($n; $b): if $b.overhead_ns then $b.profile.kernel - $n[$b.overhead_ns.baseline].profile.kernel else null end;
  (sort_by(.created) | map(.runs[0].report.results | map({key: .name, value: .}) | from_entries)) as $n
  | ["benchmark", "rate-change-at-update-%", "kernel:update", "kernel:step", "over-baseline:update", "over-baseline:step"],
    ($n[0] | keys_unsorted[] as $name
     | [$n[$u - 1], $n[$u], $n[2 * $u - 1], $n[2 * $u]] as [$a, $b, $c, $d]
     | [$name, (($b[$name].summary.mean / $a[$name].summary.mean - 1) * 100 | r4),
        "\($a[$name].profile.kernel | r4)->\($b[$name].profile.kernel | r4)",
        "\($c[$name].profile.kernel | r4)->\($d[$name].profile.kernel | r4)",
        (if $a[$name].overhead_ns then "\(over($a; $a[$name]) | r4)->\(over($b; $b[$name]) | r4)" else "-" end),
        (if $c[$name].overhead_ns then "\(over($c; $c[$name]) | r4)->\(over($d; $d[$name]) | r4)" else "-" end)])
  | @tsv' "$hist"/*.json | column -t

fail=0
changes() { "$trig" history "$hist" --format json "$@" || true; }
update=$nights step=$((2 * nights))
for metric in kernel kernel-overhead rate; do
  doc=$(changes --metric "$metric")
  found=$(jq -r '.found[] | "\(.bench) at night \(.at + 1): \(.change.before | . * 1e3 | round / 1e3) -> \(.change.after | . * 1e3 | round / 1e3) (\(.change.change_pct | . * 1e3 | round / 1e3)%)"' <<<"$doc")
  echo "--- history --metric $metric: ${found:-no change points}" | sed '2,$s/^/    /'
  jq -r '.breaks[] | "    break at night \(.at + 1)\(if .build_only then " (trig-init build only)" else "" end): \(.why | join("; "))"' <<<"$doc"
  at_update=$(jq "[.found[] | select(.at == $update)] | length" <<<"$doc")
  [ "$at_update" = 0 ] || { echo "update-proof: FAILED: --metric $metric has a change point at the update (night $((update + 1)))" >&2; fail=1; }
  case $metric in
    kernel)
      jq -e "(.found | length) > 0 and all(.found[]; .at == $step and (.bench | startswith(\"rename-\")))" <<<"$doc" >/dev/null ||
        { echo "update-proof: FAILED: --metric kernel should step at night $((step + 1)) in rename-* alone" >&2; fail=1; }
      jq -e "all(.breaks[]; .build_only)" <<<"$doc" >/dev/null ||
        { echo "update-proof: FAILED: a break that is not the build's alone" >&2; fail=1; } ;;
    rate)
      jq -e "any(.breaks[]; .at == $update and .build_only)" <<<"$doc" >/dev/null ||
        { echo "update-proof: FAILED: the rate's series do not break at the update (night $((update + 1)))" >&2; fail=1; } ;;
  esac
done
[ "$fail" = 0 ] || exit 1
echo "update-proof: OK: the kernel's instructions stepped at night $((step + 1)) (kernel B) in rename-* alone, not at the update (night $((update + 1))), where the rate's series break"
