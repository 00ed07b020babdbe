#!/usr/bin/env bash
# Writes bpf/<arch>/vmlinux.h from a kernel's BTF, without booting it:
#   scripts/gen-vmlinux-h.sh x86|arm64 KERNEL
# KERNEL is a vmlinux ELF (BTF read directly) or a raw/gzip arm64 Image or
# bzImage payload: the .BTF blob (magic 0xeB9F) is cut out of the image.
set -euo pipefail
arch=${1:?usage: gen-vmlinux-h.sh x86|arm64 KERNEL}
kernel=${2:?usage: gen-vmlinux-h.sh x86|arm64 KERNEL}
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/bpf/$arch/vmlinux.h"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(head -c4 "$kernel" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
  blob=$kernel
else
  img=$tmp/Image
  if gzip -t "$kernel" 2>/dev/null; then gzip -dc "$kernel" >"$img"; else cp "$kernel" "$img"; fi
  blob=$tmp/btf
  python3 - "$img" "$blob" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
# btf_header: magic u16, version u8, flags u8, hdr_len u32, type_off,
# type_len, str_off, str_len (u32 each); the blob ends with the strings
pos = 0
while True:
    pos = data.find(b"\x9f\xeb\x01\x00", pos)
    if pos < 0:
        sys.exit("no BTF blob (magic 0xeB9F) in the image: kernel built without CONFIG_DEBUG_INFO_BTF?")
    hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<5I", data, pos + 4)
    if hdr_len == 24 and type_off == 0 and str_off == type_len and type_len > 1 << 20:
        break
    pos += 1
open(sys.argv[2], "wb").write(data[pos:pos + hdr_len + str_off + str_len])
PY
fi
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$blob" format c >"$out"
echo "wrote $out ($(wc -l <"$out") lines)"
