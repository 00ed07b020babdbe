#!/usr/bin/env bash
# The slow kernel tests (issues "kconfigs" and "arm64"): build Debian's
# linux-source-6.1 from tinyconfig plus kconfigs/ with the vmtest profile,
# for x86-64 and arm64 (cross-compiled), boot each with trig-init vm (every
# benchmark the version and architecture support must be ok), and run the
# binary through vmtest on each (x86-64 with the TCG wrapper, arm64 on the
# root of scripts/vmtest-rootfs-arm64.sh), and on x86-64 upstream's
# local storage, htab-mem and full-update scripts whole through vmtest
# (scripts/upstream-scripts.sh fetches them). Prints the build times.
#   scripts/proofs/kernel-test.sh [--arch x86_64|arm64] [--out DIR]
#                          [--skip TEST]... [SRC]
#                          (default both; SRC: Debian's linux-source-6.1)
# --skip TEST leaves out the tests whose names hold TEST (cargo test's
# --skip): CI runs upstream's scripts earlier, beside the sweep proof.
# --out DIR (one --arch) builds in DIR instead of target/kernel-vmtest-ARCH,
# which then links to it (vmtest.toml names the kernel there): a DIR that
# holds a build of SRC rebuilds only what the vmtest options change, as
# in CI, which passes bisect-proof's build of its pristine tree.
set -euo pipefail
cd "$(dirname "$0")/../.."
arches=(); src=target/linux-source-6.1; out=""; skips=()
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arches+=("$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --skip) skips+=(--skip "$2"); shift 2 ;;
    *) src=$1; shift ;;
  esac
done
[ ${#arches[@]} -gt 0 ] || arches=(x86_64 arm64)
if [ -n "$out" ] && [ ${#arches[@]} -ne 1 ]; then
  echo "kernel-test: --out builds one kernel: give one --arch" >&2; exit 2
fi
./scripts/setup.sh --kernel --arm64
if ! command -v vmtest >/dev/null; then
  # a debug build: vmtest waits on QEMU, its own speed does not matter
  start=$(date +%s)
  cargo install --locked --debug vmtest
  echo "kernel-test: vmtest installed in $(( $(date +%s) - start )) s"
fi
if [ ! -d "$src" ]; then
  mkdir -p target && tar -C target -xf /usr/src/linux-source-6.1.tar.xz
fi
# the build directory of $1, linked from vmtest.toml's when elsewhere
build_dir() {
  local named=target/kernel-vmtest-$1
  if [ -z "$out" ]; then echo "$named"; return; fi
  if [ -e "$named" ] && [ ! -L "$named" ]; then
    echo "kernel-test: $named is a build directory and vmtest.toml names its kernel: remove it to build in $out" >&2
    exit 2
  fi
  mkdir -p "$out"
  ln -sfn "$(cd "$out" && pwd)" "$named"
  echo "$out"
}
tests=()
for arch in "${arches[@]}"; do
  start=$(date +%s)
  case $arch in
    x86_64)
      ./scripts/build.sh
      dir=$(build_dir x86_64)
      vmlinux=$(scripts/build-kernel.sh "$src" --vmtest --out "$dir" | tail -n 1)
      export TRIG_FRESH_KERNEL=$vmlinux
      TRIG_FRESH_BZIMAGE=$(cd "$dir" && pwd)/arch/x86/boot/bzImage
      export TRIG_FRESH_BZIMAGE
      # upstream's run_bench_*.sh, which the vmtest guest runs whole
      TRIG_UPSTREAM_SCRIPTS=$(scripts/upstream-scripts.sh)
      export TRIG_UPSTREAM_SCRIPTS ;;
    arm64)
      ./scripts/build.sh --arch aarch64
      dir=$(build_dir arm64)
      # 6.1 has no FPROBE on arm64: build without it (the test expects that)
      image=$(scripts/build-kernel.sh "$src" --arch arm64 --vmtest --keep-going --out "$dir" | tail -n 1)
      export TRIG_FRESH_ARM64_IMAGE=$image
      TRIG_ARM64_ROOTFS=$(scripts/vmtest-rootfs-arm64.sh)
      export TRIG_ARM64_ROOTFS ;;
    *) echo "kernel-test: unknown --arch $arch" >&2; exit 2 ;;
  esac
  echo "kernel-test: $arch kernel built in $(( $(date +%s) - start )) s"
  tests+=("${arch}_")
done
# one at a time: beside the matrix's icount boot, vmtest's guest (2 vCPUs,
# wall clock) stalled in trig-kretprobe-multi-all for over 10 minutes
cargo test --release --features boot-tests --test fresh_kernel -- --ignored --test-threads 1 \
  ${skips[@]+"${skips[@]}"} "${tests[@]}"
