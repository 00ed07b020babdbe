#!/usr/bin/env bash
# Runs the example workflows with wrkflw, a local GitHub Actions runner, in
# its emulation runtime (no containers: steps run on this machine), as far
# as it executes them (docs/sweep.md lists what it does not):
#
#   scripts/wrkflw.sh [--tree DIR]
#
# - sweep-range.yml, jobs build and slice: trig-init built in wrkflw's copy
#   of the tree, and 4 slices of the last 2 commits of the reduced sweep
#   proof's range (DIR, default target/bisect-tree, after
#   scripts/sweep-proof.sh --reduced) booting one benchmark each; the
#   slices build in that proof's build directory, so incrementally;
# - nightly-kernel.yml, jobs build and bench: the 4 cells of the matrix,
#   each booting Debian's 6.1 kernel of its architecture (fetched by
#   scripts/test.sh) for one benchmark, once;
# - then the sweep again with a failure planted in slice 2/4 (its
#   trig-init sweep plan fails): wrkflw must fail, naming that slice.
#
# Runs last in CI: wrkflw's builds share CI's target directory
# (CARGO_TARGET_DIR), to rebuild only trig-init's own crates.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/target/bisect-tree
[ "${1:-}" != --tree ] || tree=${2:?--tree DIR}
wrkflw=${WRKFLW:-wrkflw}
command -v "$wrkflw" >/dev/null || { echo "wrkflw.sh: no $wrkflw (cargo install wrkflw --version 0.8.0)" >&2; exit 2; }
sweep_build=$tree/.git/trig-sweep/build
[ -d "$sweep_build" ] || { echo "wrkflw.sh: no $sweep_build: run scripts/sweep-proof.sh --reduced first" >&2; exit 2; }

# wrkflw copies the directory it runs in (less hidden and ignored files)
# into each job's own, and sets GITHUB_WORKSPACE to it: there the
# workflows find the kernel tree, kernel/, ignored so as not to be copied
# (a name no directory of trig-init has: wrkflw matches the root's ignore
# patterns against every directory's entries, so /linux left out bpf/linux)
scratch=$top/target/wrkflw
rm -rf "$scratch"
mkdir -p "$scratch/jobs" "$scratch/home"
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
# The slices build the proof's last commits in its build directory:
# sweep.sh's default for slice K/N is build-K-of-N, a link to it here
# (kbuild resolves the link, so the objects' recorded paths match, and the
# builds are incremental); wrkflw runs the slices one at a time.
tip=$(git -C "$tree" rev-parse sweep-proof)
for k in 1 2 3 4; do ln -sfn build "$tree/.git/trig-sweep/build-$k-of-4"; done
export LOCAL_RANGE="$tip~1..$tip" LOCAL_BENCH=trig-kprobe LOCAL_RUNS=1

# The jobs' directories lie in jobs/, below the copy's .cargo/config.toml
# (wrkflw copies no hidden file; cargo reads the config of a parent
# directory). wrkflw's cache, under HOME, starts empty: a history that an
# earlier run left would be another trig-init's.
export TMPDIR=$scratch/jobs CARGO_TARGET_DIR=$top/target
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo} RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
if [ -z "${PYENV_ROOT:-}" ] && [ -d "$HOME/.pyenv" ]; then export PYENV_ROOT=$HOME/.pyenv; fi
export HOME=$scratch/home

# run NAME WORKFLOW JOB: wrkflw on JOB (and the jobs it needs), its output
# in NAME.log; its exit status
run() {
  local t0 rc=0; t0=$(date +%s)
  (cd "$scratch" && "$wrkflw" run --runtime emulation --job "$3" "$top/examples/$2") >"$scratch/$1.log" 2>&1 || rc=$?
  echo "wrkflw.sh: $1: exit $rc in $(( $(date +%s) - t0 )) s ($scratch/$1.log)" >&2
  return $rc
}
failed=0
run nightly nightly-kernel.yml bench || failed=1
run sweep sweep-range.yml slice || failed=1
if [ $failed = 1 ]; then
  grep -h -A4 "Job failed" "$scratch"/nightly.log "$scratch"/sweep.log | head -n 80 >&2
  echo "wrkflw.sh: FAILED" >&2
  exit 1
fi

# A planted failure: slice 2/4's trig-init fails its plan (sweep.sh honours
# TRIG_INIT, and wrkflw passes its environment on).
cat >"$scratch/failing-trig-init" <<EOF
#!/bin/sh
case " \$* " in *" 2/4 "*) echo "planted failure" >&2; exit 2 ;; esac
exec "$top/target/trig-init" "\$@"
EOF
chmod +x "$scratch/failing-trig-init"
if TRIG_INIT=$scratch/failing-trig-init run planted sweep-range.yml slice; then
  echo "wrkflw.sh: FAILED: slice 2/4 failed, and wrkflw did not" >&2
  exit 1
fi
if ! grep -q "Job failed: slice (slice: 2/4)" "$scratch/planted.log" ||
  grep -q "Job failed: slice (slice: [134]/4)" "$scratch/planted.log"; then
  echo "wrkflw.sh: FAILED: wrkflw failed, but not for the planted slice 2/4 alone:" >&2
  grep -E "Job (failed|succeeded)" "$scratch/planted.log" >&2
  exit 1
fi
echo "wrkflw.sh: OK: the workflows' jobs green under wrkflw, and slice 2/4's planted failure failed the run"
