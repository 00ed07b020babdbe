# What the scripts share; sourced (`. "$top/scripts/lib.sh"` with top the
# checkout), never run:
#   $trig                 trig-init: TRIG_INIT, or this checkout's
#                         target/trig-init, wherever the script runs from
#   $plugin               the QEMU plugin behind vm --profile and --cache:
#                         TRIG_INIT_PLUGIN, or beside $trig, or this
#                         checkout's target/libtrig_plugin.so
#   profiling ...         whether the boots are profiled
#   build_commit ...      builds the commit a tree has checked out
#   vm_outcome STATUS     what trig-init vm's exit status says
#   now                   seconds since the epoch, for the logs' times
#   proof_git ARGS...     git as the proofs' author (their commits of
#                         planted histories)
#   proof_branch TREE BRANCH VMTEST
#                         the proofs' start on the tree they plant on
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
# beside trig-init (a build elsewhere, TRIG_INIT), else this checkout's
# (TRIG_INIT a wrapper script)
plugin=${TRIG_INIT_PLUGIN:-$(dirname "$trig")/libtrig_plugin.so}
[ -n "${TRIG_INIT_PLUGIN:-}" ] || [ -f "$plugin" ] || plugin=$top/target/libtrig_plugin.so
# shellcheck source=scripts/qemu-plugin.sh
. "$top/scripts/qemu-plugin.sh"

now() { date +%s; }

# profiling WHO BIN WANT REQUIRE: sets the array profile_flag to the vm
# flag of the boots: WANT (--profile or --cache; empty when none is
# wanted) when the plugin file $plugin is there and QEMU BIN can
# load it; else to nothing, said once, and the boots measure unprofiled.
# REQUIRE=1 refuses to go on unprofiled: returns 2 (the caller exits),
# before any build. The one decision of bisect.sh, sweep.sh and nightly.sh.
profiling() {
  local who=$1 bin=$2 want=$3 require=$4
  profile_flag=()
  if [ -z "$want" ]; then
    [ "$require" = 0 ] || { echo "$who: --require-profile, but these boots are not profiled: --no-profile, --meter time, or KVM without --meter icount" >&2; return 2; }
  elif [ ! -f "$plugin" ]; then
    [ "$require" = 0 ] || { echo "$who: --require-profile: no plugin at $plugin (scripts/build.sh, or TRIG_INIT_PLUGIN)" >&2; return 2; }
  elif (profile_or_not "$who" "$bin" "$require"); then
    profile_flag=("$want")
  else
    # profile_or_not exits 2 with REQUIRE=1, in its subshell
    [ "$require" = 0 ] || return 2
  fi
  return 0
}

# build_commit TREE OUT LOG BUILD-KERNEL-ARGS...: builds the commit TREE
# has checked out, incrementally in the build directory OUT
# (scripts/build-kernel.sh), appending its messages to the file LOG, or
# to stderr when LOG is empty (not reopened: stderr may be a socket);
# prints the kernel image's path; returns 1 when it does not build. The
# one build of bisect.sh, sweep.sh and nightly.sh.
build_commit() {
  local tree=$1 out=$2 log=$3 img
  shift 3
  if [ -n "$log" ]; then
    img=$("$top/scripts/build-kernel.sh" "$tree" --out "$out" "$@" 2>>"$log" | tail -n 1)
  else
    img=$("$top/scripts/build-kernel.sh" "$tree" --out "$out" "$@" | tail -n 1)
  fi
  [ -n "$img" ] && [ -f "$img" ] || return 1
  echo "$img"
}

# vm_outcome STATUS: what trig-init vm's exit status STATUS says, as the
# scripts act on it (README's table): measured (0), failed (1: a
# benchmark failed or timed out, its results recorded), usage (2), or
# noboot (3 and above: a kernel did not boot or report, or trig-init
# itself died). The one reading of bisect.sh, sweep.sh and nightly.sh.
vm_outcome() {
  case $1 in
    0) echo measured ;;
    1) echo failed ;;
    2) echo usage ;;
    *) echo noboot ;;
  esac
}

proof_git() {
  git -c user.name=trig -c user.email=trig@localhost "$@"
}

# proof_branch TREE BRANCH VMTEST: makes TREE the proofs' tree of
# linux-source-6.1 (scripts/proofs/proof-tree.sh) and enters it, BRANCH
# started afresh at its pristine commit and checked out, no bisect left
# running; sets the array proof_base to the builds' base: with VMTEST=1 the
# fragments' config with vmtest's (vmtest_config), else none (tinyconfig)
proof_branch() {
  local tree=$1 branch=$2 vmtest=$3 conf
  "$top/scripts/proofs/proof-tree.sh" "$tree"
  cd "$tree" || return 1
  git bisect reset >/dev/null 2>&1 || true
  git checkout -q -f pristine
  proof_base=()
  if [ "$vmtest" = 1 ]; then
    conf=$(vmtest_config "$PWD") || return 1
    proof_base=(--base "$conf")
  fi
  git branch -f "$branch" pristine
  git checkout -q "$branch"
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

# The benchmark scripts' arguments, [KERNEL] [-- RUN-OPTIONS]: sets kernel
# (default debian:6.1.0), run_opts, and out, a temporary folder removed on
# exit.
bench_args() {
  kernel=debian:6.1.0
  if [ $# -gt 0 ] && [ "$1" != "--" ]; then kernel=$1; shift; fi
  [ "${1:-}" = "--" ] && shift
  run_opts=("$@")
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
}
