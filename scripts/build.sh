#!/usr/bin/env bash
# Builds the static trig-init.
#
#   scripts/build.sh                 x86-64, linked as target/trig-init
#   scripts/build.sh --arch aarch64  arm64, cross-built with cargo-zigbuild
#
# Both also build the QEMU plugin behind `vm --profile` (plugin/, a host
# cdylib: dynamic, so without the static build's +crt-static) as
# target/libtrig_plugin.so.
#
# x86-64: x86_64-unknown-linux-musl with libbpf, libelf and zlib built from
# source (feature `vendored`), 3.4 MB stripped. When the musl target or musl-gcc is
# missing, or that build fails, falls back to glibc static
# (x86_64-unknown-linux-gnu +crt-static, .cargo/config.toml) and says so.
# Every target is linked static and not position-independent
# (relocation-model=static in .cargo/config.toml): mapped at its link
# address, below the process's other mappings, which keeps the kernel's
# per-uprobe VMA lookup short and steady (docs/parity.md).
# aarch64: aarch64-unknown-linux-musl through zig (cargo-zigbuild), which
# brings the cross C toolchain and kernel headers.
# CARGO_TARGET_DIR (default target) is where cargo builds; the binaries
# land in target/ all the same, so a copy of the tree can build into the
# checkout's target directory.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target "${CARGO_TARGET_DIR:-target}"
# absolute, as the C flags that name its directories: another path would
# rebuild the vendored C libraries
t=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)
# land TARGET: bin= the binary cargo built for TARGET with the ship profile
# (Cargo.toml), where the scripts and vmtest.toml look for it
# (target/TARGET/release/), renamed over the old one, which a running
# trig-init may be executing
land() {
  bin=target/$1/release/trig-init
  mkdir -p "target/$1/release"
  cp "$t/$1/ship/trig-init" "$bin.new"
  mv -f "$bin.new" "$bin"
}
arch=x86_64
[ "${1:-}" = "--arch" ] && arch=${2:?--arch x86_64|aarch64}

# elfutils' configure looks for argp/fts/obstack, which libelf never uses
export ac_cv_search_argp_parse='none required' ac_cv_search_fts_close='none required' \
  ac_cv_search__obstack_free='none required'

build_plugin() {
  RUSTFLAGS="-C target-feature=-crt-static" \
    cargo build --profile ship -p trig-plugin --target x86_64-unknown-linux-gnu --target-dir "$t/plugin"
  # a new file renamed over the old: a QEMU running the old one keeps its
  # mapping (copied over in place, it died of SIGBUS mid-boot)
  cp "$t/plugin/x86_64-unknown-linux-gnu/ship/libtrig_plugin.so" target/libtrig_plugin.so.new
  mv -f target/libtrig_plugin.so.new target/libtrig_plugin.so
  echo "build: QEMU plugin -> target/libtrig_plugin.so"
}
build_plugin

# strip_shipped BIN: no symbols or debug info in what ships (the initramfs
# packs it whole), but the USDT notes, which libbpf reads from
# /proc/self/exe to attach the trig-usdt benchmarks
strip_shipped() {
  llvm-strip --strip-all --keep-section=.note.stapsdt "$1"
  readelf -S "$1" | grep -q '\.note\.stapsdt' || { echo "build: $1 lost its USDT notes" >&2; exit 1; }
}

if [ "$arch" = aarch64 ] || [ "$arch" = arm64 ]; then
  target=aarch64-unknown-linux-musl
  # pip --user puts cargo-zigbuild there
  export PATH="$PATH:$HOME/.local/bin"
  command -v cargo-zigbuild >/dev/null || { echo "build: no cargo-zigbuild (scripts/setup.sh installs it)" >&2; exit 1; }
  mkdir -p "$t/zig-support/stub"
  cp scripts/musl/argp.h "$t/zig-support/stub/argp.h"
  # zig's linker turns rustc's default debuginfo strip into strip-all,
  # USDT notes too: build unstripped and strip below
  env CFLAGS_aarch64_unknown_linux_musl="-idirafter $t/zig-support/stub" \
    CARGO_PROFILE_SHIP_STRIP=false \
    cargo zigbuild --profile ship --bin trig-init --target "$target" --no-default-features --features vendored
  land "$target"
  strip_shipped "$bin"
  file "$bin" | grep -q "ARM aarch64.*statically linked" || { echo "build: $bin is not a static arm64 binary" >&2; exit 1; }
  echo "build: $target, $(stat -c %s "$bin") bytes -> $bin"
  exit 0
fi

musl=x86_64-unknown-linux-musl
gnu=x86_64-unknown-linux-gnu

build_musl() {
  rustup target list --installed 2>/dev/null | grep -qx "$musl" || { echo "no rustup target $musl"; return 1; }
  command -v musl-gcc >/dev/null || { echo "no musl-gcc (apt-get install musl-tools)"; return 1; }
  # musl-gcc hides the kernel's uapi headers, which libbpf needs; elfutils'
  # lib/ wants argp.h, which libelf never calls (declarations only).
  local inc=$t/musl-support
  mkdir -p "$inc/stub"
  ln -sfn /usr/include/linux "$inc/linux"
  ln -sfn "/usr/include/$(gcc -dumpmachine)/asm" "$inc/asm"
  ln -sfn /usr/include/asm-generic "$inc/asm-generic"
  cp scripts/musl/argp.h "$inc/stub/argp.h"
  mkdir -p "$inc/nolib"
  env CC_x86_64_unknown_linux_musl=musl-gcc \
    CFLAGS_x86_64_unknown_linux_musl="-idirafter $inc -idirafter $inc/stub" \
    LIBBPF_SYS_LIBRARY_PATH="$inc/nolib" \
    cargo build --profile ship --bin trig-init --target "$musl" --no-default-features --features vendored
}

if out=$(build_musl 2>&1); then
  target=$musl
else
  echo "$out" | tail -n 15 >&2
  echo "build: the musl build is not possible here; falling back to glibc static ($gnu)" >&2
  cargo build --profile ship --bin trig-init --target "$gnu"
  target=$gnu
fi
land "$target"
strip_shipped "$bin"
file "$bin" | grep -q "static" || { echo "build: $bin is not statically linked" >&2; exit 1; }
ln -sfn "$target/release/trig-init" target/trig-init
echo "build: $target, $(stat -c %s "$bin") bytes -> target/trig-init"
