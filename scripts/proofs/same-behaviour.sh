#!/usr/bin/env bash
# Proves that a change of trig-init's own code left what it measures
# alone (issue 60's rule for a redesign): the build is part of a result's
# identity under icount (its code and layout are counted), so the two
# builds are judged by the kernel. Boots Debian's 6.1 kernel under each
# build (and each build's QEMU plugin) with the whole matrix, --cache and
# -p 1,4, one boot each, and checks for every result of both:
#   - the kernel's instructions per event (`profile.kernel`) identical;
#   - every other figure (rate, cache misses per event, coherence misses
#     and HITM per event, modelled rate) within 0.1%;
#   - the same results, with the same status.
# Prints a line per result and exits 1 when a check fails.
#
#   scripts/proofs/same-behaviour.sh BASE-INIT BASE-PLUGIN NEW-INIT NEW-PLUGIN
#                                    [--out DIR] [-- RUN-OPTIONS]
# BASE-INIT and NEW-INIT are static trig-init binaries (each boots as its
# own /init); each PLUGIN is the libtrig_plugin.so built from its tree.
set -euo pipefail

[ $# -ge 4 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
base_init=$1 base_plugin=$2 new_init=$3 new_plugin=$4
shift 4
out=${TMPDIR:-/tmp}/trig-same-behaviour
run=(-p '1,4')
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --) shift; run=("$@"); break ;;
    *) echo "same-behaviour: unknown option $1" >&2; exit 2 ;;
  esac
done
for f in "$base_init" "$base_plugin" "$new_init" "$new_plugin"; do
  [ -f "$f" ] || { echo "same-behaviour: no such file $f" >&2; exit 2; }
done
mkdir -p "$out"
boot() { # NAME INIT PLUGIN
  local t0=$SECONDS
  TRIG_INIT_PLUGIN=$3 "$2" vm -k debian:6.1.0 --meter icount --cache --quiet \
    --out "$out/$1" --json "$out/$1.json" -- "${run[@]}" >/dev/null ||
    { echo "same-behaviour: the $1 boot failed (results in $out/$1)" >&2; return 1; }
  echo "same-behaviour: $1 booted in $((SECONDS - t0)) s" >&2
}
boot base "$base_init" "$base_plugin"
boot new "$new_init" "$new_plugin"
python3 - "$out/base.json" "$out/new.json" <<'EOF'
import json, sys

def results(path):
    doc = json.load(open(path))
    return {r["name"]: r for run in doc["runs"] for r in run["report"]["results"]}

def figures(r):
    """Every figure of a result but the kernel's instructions, by name."""
    out = {}
    if r.get("summary"):
        out["rate"] = r["summary"]["mean"]
    p = r.get("profile") or {}
    for side in ("kernel", "user"):
        for k, v in ((p.get("memory") or {}).get(side) or {}).items():
            out[f"{side}.{k}"] = v
    c = p.get("contention") or {}
    for side in ("kernel", "user"):
        for k, v in (c.get(side) or {}).items():
            out[f"contention.{side}.{k}"] = v
    for k in ("cycles", "rate", "per_producer"):
        if isinstance(c.get(k), (int, float)):
            out[f"contention.{k}"] = c[k]
    return out

base, new = results(sys.argv[1]), results(sys.argv[2])
bad = []
if set(base) != set(new):
    bad.append(f"results differ: {sorted(set(base) ^ set(new))}")
for name in sorted(set(base) & set(new)):
    b, n = base[name], new[name]
    if b["status"] != n["status"]:
        bad.append(f"{name}: {b['status']} against {n['status']}")
        continue
    kb = (b.get("profile") or {}).get("kernel")
    kn = (n.get("profile") or {}).get("kernel")
    worst = 0.0
    fb, fn = figures(b), figures(n)
    for k in sorted(set(fb) & set(fn)):
        x, y = fb[k], fn[k]
        d = 0.0 if x == y else abs(y - x) / max(abs(x), 1e-12) * 100
        worst = max(worst, d)
        if d > 0.1:
            bad.append(f"{name}: {k} {x} against {y} ({d:.3f}%)")
    if kb != kn:
        bad.append(f"{name}: kernel insn/event {kb} against {kn}")
    print(f"{name:34} {b['status']:11} kernel insn/event {kb} / {kn}  figures within {worst:.4f}%")
for line in bad:
    print("FAIL", line)
print(f"{len(base)} results, {len(bad)} failures")
sys.exit(1 if bad else 0)
EOF
