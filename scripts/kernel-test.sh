#!/usr/bin/env bash
# The slow test of issue "kconfigs": build Debian's linux-source-6.1 from
# tinyconfig plus kconfigs/ (with the vmtest profile), then boot it with
# trig-init vm (every supported benchmark must be ok) and run trig-init
# through vmtest on it. Prints the build time.
#   scripts/kernel-test.sh [SRC]     (default: Debian's linux-source-6.1)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
need=(linux-source-6.1 flex bison bc libssl-dev dwarves libelf-dev qemu-guest-agent)
missing=()
for p in "${need[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
command -v vmtest >/dev/null || cargo install --locked vmtest
src=${1:-target/linux-source-6.1}
if [ ! -d "$src" ]; then
  mkdir -p target && tar -C target -xf /usr/src/linux-source-6.1.tar.xz
fi
start=$(date +%s)
vmlinux=$(scripts/build-kernel.sh "$src" --vmtest --out target/kernel-vmtest-x86_64 | tail -n 1)
echo "kernel-test: built $vmlinux in $(( $(date +%s) - start )) s"
export TRIG_FRESH_KERNEL=$vmlinux
export TRIG_FRESH_BZIMAGE=$PWD/target/kernel-vmtest-x86_64/arch/x86/boot/bzImage
cargo test --release --test fresh_kernel -- --ignored --test-threads 1
