#!/usr/bin/env bash
# Builds the static trig-init and links it as target/trig-init.
# glibc static-pie (x86_64-unknown-linux-gnu, +crt-static; see
# .cargo/config.toml) is the verified build here.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin trig-init
bin=target/x86_64-unknown-linux-gnu/release/trig-init
file "$bin" | grep -q "static" || { echo "build: $bin is not static" >&2; exit 1; }
ln -sfn "x86_64-unknown-linux-gnu/release/trig-init" target/trig-init
echo "build: $(file -b "$bin" | cut -d, -f1-2), $(stat -c %s "$bin") bytes: target/trig-init"
