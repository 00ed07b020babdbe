#!/usr/bin/env bash
# Proves the simulated cache of `vm --cache` (issue 35, docs/meter.md): on
# Debian's linux-source-6.1, plants into do_getpgid(), which trig-base's
# getpgid() loop runs, a pointer chase through a 1 MiB ring of cache lines:
# three instructions an event, each event's load on a line the 64 KiB L1d
# no longer holds. Builds the pristine tree and the planted commit (one
# build directory: the second build is incremental), boots both with
# `--cache` on trig-base, and checks with compare that
#   - the planted change moves the kernel's L1d misses by at least one an
#     event, relatively more than its instructions (at most 3 more);
#   - compare names the function the misses moved in (do_getpgid, inlined
#     into __x64_sys_getpgid).
# Prints both comparisons; exit 1 when a check fails.
#
#   scripts/proofs/cache-proof.sh [--tree DIR] [--build DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
tree=$top/target/cache-tree; build=$top/target/cache-build
while [ $# -gt 0 ]; do
  case $1 in
    --tree) tree=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: $0 [--tree DIR] [--build DIR]" >&2; exit 2 ;;
  esac
done
images=$build/../cache-proof-images
mkdir -p "$images"
"$top/scripts/proofs/proof-tree.sh" "$tree"
cd "$tree"
git checkout -q -f pristine
git branch -f cache-plant pristine
git checkout -q cache-plant
# the ring's lines point at each other; made once at boot, outside any
# measured window; the chase is a load of trig_at, a load through it and
# a store back
perl -0pi -e 's/(static int do_getpgid\(pid_t pid\)\n\{\n)/#define TRIG_RING_LINES 16384
static void *trig_ring[TRIG_RING_LINES * 8] __aligned(64);
static void **trig_at = trig_ring;

static int __init trig_ring_init(void)
{
\tint i;

\tfor (i = 0; i < TRIG_RING_LINES; i++)
\t\ttrig_ring[i * 8] = &trig_ring[((i + 1) % TRIG_RING_LINES) * 8];
\treturn 0;
}
core_initcall(trig_ring_init);

$1\ttrig_at = READ_ONCE(*trig_at);\n/' kernel/sys.c
grep -q 'trig_at = READ_ONCE' kernel/sys.c || { echo "cache-proof: could not plant into do_getpgid" >&2; exit 1; }
proof_git commit -qam "sys: an L1d miss an event in getpgid (planted)"

built() { # NAME: build this checkout once into $images/NAME
  [ -f "$images/$1.bzImage" ] && return
  local start; start=$(date +%s)
  "$top/scripts/build-kernel.sh" "$tree" --out "$build" >/dev/null 2>"$images/$1.log" ||
    { echo "cache-proof: the $1 kernel does not build ($images/$1.log)" >&2; exit 1; }
  cp "$build/arch/x86/boot/bzImage" "$images/$1.bzImage"
  echo "cache-proof: $1 built in $(( $(date +%s) - start )) s"
}
git checkout -q pristine
built base
git checkout -q cache-plant
built plant

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$trig" vm -k "$images/base.bzImage" -k "$images/plant.bzImage" --commit base --commit plant \
  --cache --out "$out" -q -- --filter trig-base >/dev/null || true
files=("$out"/*.json)
[ ${#files[@]} -eq 2 ] || { echo "cache-proof: expected two results files, got ${#files[@]}" >&2; exit 1; }
for m in l1d-misses kernel; do
  echo "== base -> plant, --metric $m =="
  "$trig" compare "${files[@]}" --metric "$m" --color never | sed -n '/^BENCHMARK/,$p' || true
  "$trig" compare "${files[@]}" --metric "$m" --format json >"$out/$m.json" || true
done
python3 - "$out/l1d-misses.json" "$out/kernel.json" <<'PY'
import json, sys
miss, insn = (json.load(open(p)) for p in sys.argv[1:])
def row(d):
    b = next(b for b in d["benches"] if b["name"] == "trig-base")
    return b, b["metrics"][0]
(bm, m), (bi, i) = row(miss), row(insn)
dm = m["new"]["mean"] - m["base"]["mean"]
di = i["new"]["mean"] - i["base"]["mean"]
rm, ri = dm / m["base"]["mean"] * 100, di / i["base"]["mean"] * 100
movers = [f["name"] for f in bm["movers"]["functions"]]
print(f"trig-base: kernel L1d misses {m['base']['mean']:.3f} -> {m['new']['mean']:.3f} /event ({rm:+.0f}%), "
      f"kernel insns {i['base']['mean']:.2f} -> {i['new']['mean']:.2f} ({di:+.2f}, {ri:+.3f}%); "
      f"top mover: {movers[0] if movers else 'none'}")
ok = dm >= 0.99 and di <= 3.01 and abs(rm) > abs(ri) and bm["verdict"] == "regressed"
ok &= bool(movers) and movers[0] in ("do_getpgid", "__x64_sys_getpgid")
print("cache-proof:", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
