#!/usr/bin/env bash
# The test command: set up (x86-64 and arm64 toolchains, QEMU, the Debian
# kernel cache fills on first use), build the arm64 binary that the arm64
# boot test packs, then every test: unit, CLI, fragments, and boots of
# Debian 6.1 kernels (x86-64 and arm64) under QEMU: feature boot-tests
# (plain `cargo test` is the fast tier, no boots).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --arm64
./scripts/build.sh --arch aarch64
cargo test --release --features boot-tests "$@"
