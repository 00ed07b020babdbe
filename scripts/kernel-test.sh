#!/usr/bin/env bash
# The slow kernel tests (issues "kconfigs" and "arm64"): build Debian's
# linux-source-6.1 from tinyconfig plus kconfigs/ with the vmtest profile,
# for x86-64 and arm64 (cross-compiled), boot each with trig-init vm (every
# benchmark the version and architecture support must be ok), and run the
# binary through vmtest on each (x86-64 with the TCG wrapper, arm64 on the
# root of scripts/vmtest-rootfs-arm64.sh). Prints the build times.
#   scripts/kernel-test.sh [--arch x86_64|arm64] [SRC]
#                          (default both; SRC: Debian's linux-source-6.1)
set -euo pipefail
cd "$(dirname "$0")/.."
arches=(); src=target/linux-source-6.1
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arches+=("$2"); shift 2 ;;
    *) src=$1; shift ;;
  esac
done
[ ${#arches[@]} -gt 0 ] || arches=(x86_64 arm64)
./scripts/setup.sh --kernel --arm64
command -v vmtest >/dev/null || cargo install --locked vmtest
if [ ! -d "$src" ]; then
  mkdir -p target && tar -C target -xf /usr/src/linux-source-6.1.tar.xz
fi
tests=()
for arch in "${arches[@]}"; do
  start=$(date +%s)
  case $arch in
    x86_64)
      ./scripts/build.sh
      vmlinux=$(scripts/build-kernel.sh "$src" --vmtest --out target/kernel-vmtest-x86_64 | tail -n 1)
      export TRIG_FRESH_KERNEL=$vmlinux
      export TRIG_FRESH_BZIMAGE=$PWD/target/kernel-vmtest-x86_64/arch/x86/boot/bzImage ;;
    arm64)
      ./scripts/build.sh --arch aarch64
      # 6.1 has no FPROBE on arm64: build without it (the test expects that)
      image=$(scripts/build-kernel.sh "$src" --arch arm64 --vmtest --keep-going --out target/kernel-vmtest-arm64 | tail -n 1)
      export TRIG_FRESH_ARM64_IMAGE=$image
      export TRIG_ARM64_ROOTFS=$(scripts/vmtest-rootfs-arm64.sh) ;;
    *) echo "kernel-test: unknown --arch $arch" >&2; exit 2 ;;
  esac
  echo "kernel-test: $arch kernel built in $(( $(date +%s) - start )) s"
  tests+=("${arch}_")
done
cargo test --release --features boot-tests --test fresh_kernel -- --ignored --test-threads 1 "${tests[@]}"
