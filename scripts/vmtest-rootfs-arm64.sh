#!/usr/bin/env bash
# Builds an arm64 root for vmtest's arm64 target, on any host:
#
#   scripts/vmtest-rootfs-arm64.sh [DIR]     (default target/rootfs-arm64)
#
# vmtest boots a foreign-architecture guest on a root given in vmtest.toml
# (the host's own root would be x86-64). Its guest init is a bash script
# that mounts pseudo filesystems with util-linux and starts qemu-ga, so the
# root needs bash, util-linux, coreutils, grep and qemu-guest-agent, with
# their libraries. The Debian arm64 packages and their dependencies are
# unpacked with dpkg-deb from a private apt lists directory: no foreign
# architecture is added to the system and nothing is installed on it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-$top/target/rootfs-arm64}
# the cache trig-init vm uses for Debian kernels (TRIG_CACHE overrides)
cache=${TRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trig-init}
lists=$cache/apt-lists-arm64
debs=$cache/debs-arm64
opts=(-oAPT::Architectures::=arm64 -oDir::State::Lists="$lists")
wanted=(bash util-linux mount coreutils grep qemu-guest-agent busybox-static)

mkdir -p "$lists/partial" "$debs"
[ -n "$(ls "$lists"/*arm64_Packages* 2>/dev/null)" ] || apt-get "${opts[@]}" update >&2
# every arm64 package the wanted ones need, Pre-Depends included
mapfile -t pkgs < <(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests \
    --no-conflicts --no-breaks --no-replaces --no-enhances "${wanted[@]/%/:arm64}" |
  grep -E '^[a-z0-9][^ ]*:arm64$' | sort -u)
[ ${#pkgs[@]} -gt 0 ] || { echo "vmtest-rootfs: apt resolved no arm64 packages" >&2; exit 1; }
(cd "$debs" && apt-get "${opts[@]}" -oAPT::Sandbox::User=root download "${pkgs[@]}" >/dev/null)

rm -rf "$root"
mkdir -p "$root"
for p in "${pkgs[@]}"; do
  name=${p%:arm64}
  deb=$(compgen -G "$debs/${name}_*.deb" | sort -V | tail -1 || true)
  [ -n "$deb" ] || { echo "vmtest-rootfs: no .deb for $p in $debs" >&2; exit 1; }
  dpkg-deb -x "$deb" "$root"
done
# mount points of vmtest's init, and the poweroff its exit trap calls
mkdir -p "$root"/{proc,sys,dev,run,tmp,mnt,var/run}
ln -sf /bin/busybox "$root/sbin/poweroff"
for f in bin/bash bin/mount usr/bin/setsid usr/sbin/qemu-ga; do
  [ -e "$root/$f" ] || { echo "vmtest-rootfs: $f missing from $root" >&2; exit 1; }
done
echo "vmtest-rootfs: ${#pkgs[@]} packages in $root ($(du -sh "$root" | cut -f1))" >&2
echo "$root"
