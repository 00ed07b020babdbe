#!/usr/bin/env bash
# Runs the example workflows with wrkflw, a local GitHub Actions runner, in
# its emulation runtime (no containers: steps run on this machine), as far
# as it executes them (docs/sweep.md lists what it does not):
#
#   scripts/proofs/wrkflw.sh [--tree DIR]
#
# - nightly-kernel.yml, jobs build and bench: the 4 cells of the matrix,
#   each booting Debian's 6.1 kernel of its architecture (fetched by
#   scripts/test.sh) for one benchmark, once: all green;
# - sweep-range.yml, jobs build and slice: trig-init as CI built it, and 4 slices of the last 2 commits of the reduced sweep
#   proof's range (DIR, default target/bisect-tree, after
#   scripts/proofs/sweep-proof.sh --reduced) booting one benchmark each; the
#   slices build in that proof's build directory with its config
#   (LOCAL_BUILD, LOCAL_CONFIG), so incrementally. Slices 1/4 and 2/4
#   measure a commit each; slice 3/4 (with no commit left, as 4/4) has a
#   failure planted (its trig-init sweep plan fails): wrkflw must fail,
#   naming that slice alone, and the slices around it keep their results.
# wrkflw shows no output of a step that succeeded and deletes each job's
# directory, so a green run alone proves nothing: the jobs copy what they
# made to LOCAL_KEEP, and this script checks it (every slice's and every
# cell's archive, with results of the benchmark, hits counted on both
# sides).
#
# The build jobs pack trig-init as CI built this checkout (LOCAL_TARGET:
# its target directory, which must hold the x86-64 and arm64 binaries and
# the plugin: scripts/build.sh, both arches) instead of building it in
# wrkflw's copy of the tree: wrkflw copies files with new times, so
# cargo would rebuild every crate for both arches there.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
tree=$top/target/bisect-tree
[ "${1:-}" != --tree ] || tree=${2:?--tree DIR}
wrkflw=${WRKFLW:-wrkflw}
command -v "$wrkflw" >/dev/null || { echo "wrkflw.sh: no $wrkflw (cargo install wrkflw --version 0.8.0)" >&2; exit 2; }
# the proof's build directory (seed.path: bisect-proof's, when the proof
# started from it), and the config it was built with (--vmtest's, or the
# fragments' on tinyconfig)
sweep_build=$(sweep_build "$tree/.git/trig-sweep")
[ -d "$sweep_build" ] || { echo "wrkflw.sh: no $sweep_build: run scripts/proofs/sweep-proof.sh --reduced first" >&2; exit 2; }
config=$(vmtest_dir "$tree")/.config
[ -f "$config" ] || config=tinyconfig

# wrkflw copies the directory it runs in (less hidden and ignored files)
# into each job's own, and sets GITHUB_WORKSPACE to it: there the
# workflows find the kernel tree, kernel/, ignored so as not to be copied
# (a name no directory of trig-init has: wrkflw matches the root's ignore
# patterns against every directory's entries, so /linux left out bpf/linux).
# Outside the checkout: below it, cargo would read the checkout's
# .cargo/config.toml as well as the copy's, and join their rustflags,
# which rebuilt the vendored C libraries (3 min) for both architectures.
scratch=${TMPDIR:-/tmp}/trig-wrkflw
rm -rf "$scratch"
mkdir -p "$scratch/jobs" "$scratch/home" "$scratch/kept"
git -C "$top" ls-files -z | tar -C "$top" --null -T - -cf - | tar -C "$scratch" -xf -
printf '/kernel\n/jobs\n/home\n' >>"$scratch/.gitignore"
ln -s "$tree" "$scratch/kernel"
# Debian's 6.1 kernels that scripts/test.sh fetched, for the nightly's
# cells (kernels the bench job would build instead)
image() {
  ls -d "${TRIG_CACHE:-$HOME/.cache/trig-init}"/kernels/linux-image-6.1.0-*-"$1"-unsigned/root/boot/vmlinuz-* 2>/dev/null |
    sort -V | tail -n 1
}
export LOCAL_IMAGE_x86_64=${LOCAL_IMAGE_x86_64:-$(image amd64)} LOCAL_IMAGE_aarch64=${LOCAL_IMAGE_aarch64:-$(image arm64)}
for a in x86_64 aarch64; do
  v=LOCAL_IMAGE_$a
  [ -f "${!v}" ] || { echo "wrkflw.sh: no Debian 6.1 kernel for $a in trig-init's cache (scripts/test.sh fetches it); or set $v" >&2; exit 2; }
done
# trig-init as CI built it, for the build jobs (LOCAL_TARGET)
for f in trig-init libtrig_plugin.so aarch64-unknown-linux-musl/release/trig-init; do
  [ -f "$top/target/$f" ] || { echo "wrkflw.sh: no target/$f: scripts/build.sh and scripts/build.sh --arch aarch64 first" >&2; exit 2; }
done
export LOCAL_TARGET=$top/target
# The slices build the proof's last commits in its build directory, one
# slice at a time (wrkflw runs a matrix so)
tip=$(git -C "$tree" rev-parse sweep-proof)
export LOCAL_RANGE="$tip~1..$tip" LOCAL_BENCH=trig-kprobe LOCAL_RUNS=1
export LOCAL_BUILD=$sweep_build LOCAL_CONFIG=$config LOCAL_KEEP=$scratch/kept

# The jobs' directories lie in jobs/, below the copy's .cargo/config.toml
# (wrkflw copies no hidden file; cargo reads the config of a parent
# directory, as of the checkout in CI). wrkflw's cache, under HOME, starts
# empty: a history that an earlier run left would be another trig-init's.
export TMPDIR=$scratch/jobs
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo} RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
if [ -z "${PYENV_ROOT:-}" ] && [ -d "$HOME/.pyenv" ]; then export PYENV_ROOT=$HOME/.pyenv; fi
export HOME=$scratch/home

# run NAME WORKFLOW JOB: wrkflw on JOB (and the jobs it needs), its output
# in NAME.log; its exit status
run() {
  local t0 rc=0; t0=$(date +%s)
  (cd "$scratch" && "$wrkflw" --verbose run --runtime emulation --job "$3" "$top/examples/$2") >"$scratch/$1.log" 2>&1 || rc=$?
  echo "wrkflw.sh: $1: exit $rc in $(( $(date +%s) - t0 )) s ($scratch/$1.log)" >&2
  return $rc
}
failed=0
if ! run nightly nightly-kernel.yml bench; then
  grep -h -A4 "Job failed" "$scratch/nightly.log" | head -n 80 >&2
  echo "wrkflw.sh: FAILED" >&2
  exit 1
fi
# The planted failure: slice 3/4's trig-init fails its plan (sweep.sh
# honours TRIG_INIT, and wrkflw passes its environment on).
cat >"$scratch/failing-trig-init" <<EOF
#!/bin/sh
case " \$* " in *" 3/4 "*) echo "planted failure" >&2; exit 2 ;; esac
exec "$trig" "\$@"
EOF
chmod +x "$scratch/failing-trig-init"
if TRIG_INIT=$scratch/failing-trig-init run sweep sweep-range.yml slice; then
  echo "wrkflw.sh: FAILED: slice 3/4 failed, and wrkflw did not" >&2
  exit 1
fi
if ! grep -q "Job failed: slice (slice: 3/4)" "$scratch/sweep.log" ||
  grep -q "Job failed: slice (slice: [124]/4)" "$scratch/sweep.log"; then
  echo "wrkflw.sh: FAILED: wrkflw failed, but not for the planted slice 3/4 alone:" >&2
  grep -E "Job (failed|succeeded)" "$scratch/sweep.log" >&2
  grep -h -A4 "Job failed" "$scratch/sweep.log" | head -n 80 >&2
  exit 1
fi
echo "wrkflw.sh: slice 3/4's planted failure failed the run, on that slice alone"

# What the jobs made: every archive there, and in each file of results,
# booted under icount: every benchmark ok, and the one asked for
# (trig-base comes with every run) profiled, its hits counted by BPF and
# by the trigger alike
results() {
  jq -e -s 'all(.vm.meter == "icount" and ([.runs[].report.results[]] as $r | all($r[]; .status == "ok")
    and any($r[]; .name == "trig-kprobe" and .hits.agree == true and .profile != null)))' "$@" >/dev/null
}
kept() {
  local tar=$scratch/kept/$1.tar dir=$scratch/kept/$1
  [ -f "$tar" ] || { echo "wrkflw.sh: FAILED: $2 kept no $1.tar: did it run?" >&2; return 1; }
  mkdir -p "$dir" && tar -xf "$tar" -C "$dir"
}
for k in 1 2 4; do kept "sweep-$k-of-4" "slice $k/4" || failed=1; done
mapfile -t measured < <(find "$scratch/kept" -path '*/sweep/[0-9]*.json')
if [ "${#measured[@]}" = 2 ] && results "${measured[@]}"; then
  echo "wrkflw.sh: the slices measured both commits of $LOCAL_RANGE: ${measured[*]##*/}"
else
  echo "wrkflw.sh: FAILED: the slices should have measured 2 commits, each trig-kprobe counted: ${measured[*]:-none}" >&2; failed=1
fi
for cell in x86_64-tinyconfig x86_64-defconfig aarch64-tinyconfig aarch64-defconfig; do
  kept "history-$cell" "cell $cell" || { failed=1; continue; }
  mapfile -t nights < <(find "$scratch/kept/history-$cell/$cell" -maxdepth 1 -name '*.json' ! -name alerts.json)
  if [ "${#nights[@]}" = 1 ] && results "${nights[@]}"; then
    echo "wrkflw.sh: cell $cell measured ${nights[0]##*/}"
  else
    echo "wrkflw.sh: FAILED: cell $cell should have one night, trig-kprobe counted: ${nights[*]:-none}" >&2; failed=1
  fi
done
[ $failed = 0 ] || { echo "wrkflw.sh: FAILED" >&2; exit 1; }
echo "wrkflw.sh: OK: the nightly's jobs green under wrkflw, the sweep's slices kept their results, and slice 3/4's planted failure failed the run"
