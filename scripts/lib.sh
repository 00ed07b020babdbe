# What the scripts share; sourced (`. "$top/scripts/lib.sh"` with top the
# checkout), never run:
#   $trig                 trig-init: TRIG_INIT, or this checkout's
#                         target/trig-init, wherever the script runs from
#   proof_git ARGS...     git as the proofs' author (their commits of
#                         planted histories)
#   vmtest_config TREE    writes the fragments' config with
#                         kconfigs/vmtest.config's for TREE (in its .git)
#                         and prints its path: the proofs' kernels then
#                         carry vmtest's options, and kernel-test.sh can
#                         build its kernel in their build directory
#   vmtest_dir TREE       where vmtest_config writes it
#   sweep_build STATE     the build directory the sweep proof's seed was
#                         built in (STATE: TREE's .git/trig-sweep)
# shellcheck shell=bash
# shellcheck disable=SC2034 # used by the scripts that source this
trig=${TRIG_INIT:-$top/target/trig-init}

proof_git() {
  git -c user.name=trig -c user.email=trig@localhost "$@"
}

vmtest_dir() {
  echo "$(git -C "$1" rev-parse --absolute-git-dir)/trig-vmtest"
}

vmtest_config() {
  "$top/scripts/build-kernel.sh" "$1" --vmtest --config-only --out "$(vmtest_dir "$1")"
}

sweep_build() {
  cat "$1/seed.path" 2>/dev/null || echo "$1/build"
}
