#!/usr/bin/env bash
# Builds a kernel that can run the whole trig-init matrix.
#
#   scripts/build-kernel.sh SRC [--arch x86_64|arm64] [--base tinyconfig|defconfig|CONFIG]
#                               [--out DIR] [--vmtest] [--config-only] [--keep-going]
#                               [-- MAKE-VARIABLES...]
#
# Configures SRC out of tree (make O=DIR) from the base plus kconfigs/
# (common, the architecture's, and vmtest's with --vmtest), runs
# olddefconfig, then checks that every option the fragments ask for made
# it into DIR/.config: olddefconfig silently drops options whose
# dependencies are missing or that this kernel version renamed. Builds
# with all cores (cross-compiling arm64 on x86-64 with aarch64-linux-gnu-)
# and prints the bootable image's path on the last line of stdout.
# --keep-going builds even when options were dropped (arm64 6.1 has no
# FPROBE, so no kprobe_multi: those benchmarks are then unsupported).
# MAKE-VARIABLES go to every make call: `-- LLVM=1` builds with clang,
# `-- CC="ccache gcc"` through ccache (the kernel's Makefile sets CC, so
# only the command line overrides it; TRIG_CCACHE, below, shares the
# cache between trees in other places). SRC must not be configured in tree
# (a .config in SRC makes O= builds refuse): `make mrproper` there first.
# The build is reproducible: the kernel's banner carries the commit's time
# and fixed user, host and build count (KBUILD_BUILD_* from the
# environment win) and pahole encodes BTF in one thread
# (scripts/pahole-serial), so one commit gives one image, and one figure,
# in any build directory on any runner.
# Exit: 0 built, 1 build failed, 2 usage, 3 options dropped.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: $0 SRC [--arch x86_64|arm64] [--base tinyconfig|defconfig|CONFIG] [--out DIR] [--vmtest] [--config-only] [--keep-going] [-- MAKE-VARIABLES...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
src=$(cd "$1" && pwd) || usage
shift
arch=$(uname -m); base=tinyconfig; out=""; vmtest=0; config_only=0; keep_going=0; make_vars=()
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=${2:?}; shift 2 ;;
    --base) base=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --vmtest) vmtest=1; shift ;;
    --config-only) config_only=1; shift ;;
    --keep-going) keep_going=1; shift ;;
    --) shift; make_vars=("$@"); break ;;
    *) usage ;;
  esac
done
case $arch in
  x86_64|x86|amd64) arch=x86_64; karch=x86; image=arch/x86/boot/bzImage; target=bzImage; frag=x86_64 ;;
  aarch64|arm64) arch=arm64; karch=arm64; image=arch/arm64/boot/Image; target=Image; frag=arm64 ;;
  *) echo "build-kernel: unknown --arch $arch" >&2; exit 2 ;;
esac
out=${out:-$src/build-trig-$arch}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -f "$src/.config" ]; then
  echo "build-kernel: $src is configured in tree; out-of-tree builds (O=) refuse that: run 'make mrproper' in it first" >&2
  exit 2
fi
make_args=(-C "$src" O="$out" ARCH="$karch")
if [ "$arch" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then
  make_args+=(CROSS_COMPILE=aarch64-linux-gnu-)
fi
# BTF encoded in one thread, the same every build (scripts/pahole-serial)
make_args+=(PAHOLE="$top/scripts/pahole-serial")
# TRIG_CCACHE=DIR (.ci/run sets it): the kernel's C and assembly compiled
# through ccache, its cache in DIR, shared by build directories and by
# trees in other places (another clone's target/bisect-tree): ccache
# rewrites the paths under SRC relative to the build directory (base_dir)
# and leaves the build directory out of the hash (hash_dir false). The
# image stays the one a plain build makes: the Makefile's
# -fmacro-prefix-map strips SRC's absolute path from __FILE__, and the
# relative form ccache passes is stripped the same way here (KCPPFLAGS);
# only DWARF's compile directory may then name another build's. Left out
# when MAKE-VARIABLES choose the compiler (CC, LLVM) or KCPPFLAGS. A
# build directory built without it is rebuilt whole once (kbuild sees a
# new command line), so keep it on or off for a directory.
if [ -n "${TRIG_CCACHE:-}" ] &&
   ! printf '%s\n' ${make_vars[@]+"${make_vars[@]}"} | grep -qE '^(CC|LLVM|KCPPFLAGS)='; then
  command -v ccache >/dev/null ||
    { echo "build-kernel: TRIG_CCACHE is set, but there is no ccache (scripts/setup.sh --kernel-tools installs it)" >&2; exit 2; }
  # the Makefile names SRC by its real path (a workflow's kernel/ is a link)
  CCACHE_BASEDIR=$(cd "$src" && pwd -P)
  export CCACHE_DIR=$TRIG_CCACHE CCACHE_BASEDIR CCACHE_NOHASHDIR=1
  cross=""
  [ "$arch" = arm64 ] && [ "$(uname -m)" != aarch64 ] && cross=aarch64-linux-gnu-
  make_args+=(CC="ccache ${cross}gcc"
              KCPPFLAGS="${KCPPFLAGS:+$KCPPFLAGS }-fmacro-prefix-map=$(realpath -m --relative-to="$out" "$src")/=")
fi
make_args+=(${make_vars[@]+"${make_vars[@]}"})
frags=("$top/kconfigs/common.config" "$top/kconfigs/$frag.config")
[ "$vmtest" = 1 ] && frags+=("$top/kconfigs/vmtest.config")

# configure in a side directory and install the result only when it
# changed: a rewritten .config would make the next build a full one
conf="$out/.trig-config"
mkdir -p "$conf"
conf_args=(-C "$src" O="$conf" ARCH="$karch" "${make_args[@]:3}")
case $base in
  tinyconfig|defconfig) make "${conf_args[@]}" -s "$base" >/dev/null ;;
  *) [ -f "$base" ] || { echo "build-kernel: no config file $base" >&2; exit 2; }
     cp "$base" "$conf/.config" ;;
esac
"$src/scripts/kconfig/merge_config.sh" -m -O "$conf" "$conf/.config" "${frags[@]}" >/dev/null
# kconfig warns "override: X changes choice state" for every choice a
# fragment makes against the base (tinyconfig picks SLOB, -Os, no DWARF):
# expected, so said once as such; any other warning is shown as it is
if ! kconfig_err=$(make "${conf_args[@]}" -s olddefconfig 2>&1 >/dev/null); then
  printf '%s\n' "$kconfig_err" >&2
  echo "build-kernel: olddefconfig failed" >&2
  exit 1
fi
chosen=()
while IFS= read -r line; do
  if [[ $line =~ warning:\ override:\ ([A-Za-z0-9_]+)\ changes\ choice\ state$ ]] &&
     grep -qE "^CONFIG_${BASH_REMATCH[1]}=" "${frags[@]}"; then
    chosen+=("${BASH_REMATCH[1]}")
  elif [ -n "$line" ]; then
    printf '%s\n' "$line" >&2
  fi
done <<<"$kconfig_err"
[ ${#chosen[@]} -eq 0 ] ||
  echo "build-kernel: the fragments choose ${chosen[*]} over the $base defaults (kconfig's 'override' warnings, expected)" >&2
cmp -s "$conf/.config" "$out/.config" || cp "$conf/.config" "$out/.config"

# every CONFIG_X=v and "# CONFIG_X is not set" of the fragments, checked
dropped=()
while IFS= read -r line; do
  if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
    want="${BASH_REMATCH[1]}=${BASH_REMATCH[2]}"
    grep -qxF "$want" "$out/.config" || dropped+=("$want (have: $(grep -E "^(# )?${BASH_REMATCH[1]}[= ]" "$out/.config" || echo absent))")
  elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
    ! grep -qE "^${BASH_REMATCH[1]}=[ym]" "$out/.config" || dropped+=("${BASH_REMATCH[1]} should be unset")
  fi
done < <(cat "${frags[@]}")
if [ ${#dropped[@]} -gt 0 ]; then
  echo "build-kernel: the kernel in $src dropped ${#dropped[@]} option(s) the fragments ask for:" >&2
  printf '  %s\n' "${dropped[@]}" >&2
  echo "(a dependency is missing from the fragments, this version lacks or renamed the option)" >&2
  [ "$keep_going" = 1 ] || exit 3
  echo "build-kernel: --keep-going: building without them" >&2
else
  echo "build-kernel: $out/.config has every option of ${frags[*]##*/}" >&2
fi
# a base config may bring debugging that distorts every number: the
# options of kconfigs/distorting.list (which tests/repo/kconfigs.rs keeps the
# fragments clear of)
distorting=$(awk '{ sub(/#.*/, "") } NF { print $1 }' "$top/kconfigs/distorting.list" | paste -sd '|')
slow=$(grep -oE "^CONFIG_($distorting)=[ym]" "$out/.config" || true)
[ -z "$slow" ] || echo "build-kernel: WARNING: the base enables debugging that distorts performance: $(echo $slow)" >&2
[ "$config_only" = 1 ] && { echo "$out/.config"; exit 0; }

# make's own "  CC      kernel/fork.o" lines become a progress count (one
# updating line on a terminal, a line every 500 steps in a log), so a
# 5-minute build is not silent; warnings and errors pass through whole
progress() {
  local tty=0
  [ -t 2 ] && tty=1
  awk -v tty="$tty" '
    /^  [A-Z][A-Z0-9_]* +[^ ]/ {
      n++
      if (tty) printf "\rbuild-kernel: %d steps, %s\033[K", n, $2 > "/dev/stderr"
      else if (n % 500 == 0) printf "build-kernel: %d steps, at %s\n", n, $2 > "/dev/stderr"
      next
    }
    /^make(\[[0-9]+\])?: (Entering|Leaving) directory/ { next }
    { if (tty && n) printf "\n" > "/dev/stderr"; print > "/dev/stderr" }
    END { if (tty && n) printf "\n" > "/dev/stderr" }'
}
# a reproducible build (the kernel's Documentation/kbuild/reproducible-builds.rst):
# the banner and `uname -v` otherwise carry the build's time, count, user
# and host, and the guest's figures move with them: one commit built in
# two build directories gave other samples and instruction counts, and so
# would two CI runners. The time is the commit's (the Makefile's without
# git); each can be set from outside.
export KBUILD_BUILD_USER=${KBUILD_BUILD_USER:-trig-init}
export KBUILD_BUILD_HOST=${KBUILD_BUILD_HOST:-trig-init}
export KBUILD_BUILD_VERSION=${KBUILD_BUILD_VERSION:-1}
if [ -z "${KBUILD_BUILD_TIMESTAMP:-}" ]; then
  when=$(git -C "$src" log -1 --format=%ct 2>/dev/null) || when=$(stat -c %Y "$src/Makefile")
  KBUILD_BUILD_TIMESTAMP=$(LC_ALL=C date -u -d "@$when" '+%a %b %e %H:%M:%S UTC %Y')
  export KBUILD_BUILD_TIMESTAMP
fi
start=$(date +%s)
echo "build-kernel: building $target in $out with $(nproc) jobs (a first build of tinyconfig 6.1 takes about 6 min on 2 cores, a rebuild after a small change under a minute)" >&2
if ! make "${make_args[@]}" -j"$(nproc)" "$target" 2>&1 | progress; then
  echo "build-kernel: build failed" >&2
  exit 1
fi
echo "build-kernel: built in $(( $(date +%s) - start )) s" >&2
# x86: the vmlinux ELF boots faster (PVH) than the bzImage under QEMU;
# it keeps its DWARF (kconfigs/common.config), which --profile's source
# lines read, as arm64's $out/vmlinux beside its Image (docs/profile.md)
if [ "$arch" = x86_64 ] && [ -f "$out/vmlinux" ]; then
  echo "$out/vmlinux"
else
  echo "$out/$image"
fi
