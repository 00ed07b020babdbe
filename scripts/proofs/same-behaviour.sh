#!/usr/bin/env bash
# Proves that a change of trig-init's own code left what it measures
# alone (issue 60's rule for a redesign): the build is part of a result's
# identity under icount (its code and layout are counted), so the two
# builds are judged by the kernel. Boots Debian's 6.1 kernel under each
# build (and each build's QEMU plugin) twice, one boot each: the whole
# matrix profiled (--profile), and --cache at -p 1,4 on the benchmarks of
# each kind of trigger (trig-base, trig-usermode-count, trig-uprobe-nop,
# trig-kprobe, rename-base: the whole matrix at -p 4 under --cache would
# take two hours here); and checks for every result of both:
#   - the kernel's instructions per event (`profile.kernel`) identical;
#   - every other figure (rate, cache misses per event, coherence misses
#     and HITM per event, modelled rate) within 0.1%, or a hundredth an
#     event for counts that small;
#   - the same results, with the same status.
# Prints a line per result and exits 1 when a check fails.
#
#   scripts/proofs/same-behaviour.sh BASE-INIT BASE-PLUGIN NEW-INIT NEW-PLUGIN
#                                    [--out DIR]
# BASE-INIT and NEW-INIT are static trig-init binaries (each boots as its
# own /init); each PLUGIN is the libtrig_plugin.so built from its tree.
set -euo pipefail

[ $# -ge 4 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
base_init=$1 base_plugin=$2 new_init=$3 new_plugin=$4
shift 4
out=${TMPDIR:-/tmp}/trig-same-behaviour
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    *) echo "same-behaviour: unknown option $1" >&2; exit 2 ;;
  esac
done
cached=(-p '1,4')
for b in trig-base trig-usermode-count trig-uprobe-nop trig-kprobe rename-base; do
  cached+=(--filter "$b")
done
for f in "$base_init" "$base_plugin" "$new_init" "$new_plugin"; do
  [ -f "$f" ] || { echo "same-behaviour: no such file $f" >&2; exit 2; }
done
mkdir -p "$out"
boot() { # NAME INIT PLUGIN VM-OPTION -- RUN-OPTIONS...
  local name=$1 init=$2 plugin=$3 how=$4 t0=$SECONDS
  shift 5
  TRIG_INIT_PLUGIN=$plugin "$init" vm -k debian:6.1.0 --meter icount "$how" --quiet \
    --out "$out/$name" --json "$out/$name.json" -- "$@" >/dev/null ||
    { echo "same-behaviour: the $name boot failed (results in $out/$name)" >&2; return 1; }
  echo "same-behaviour: $name booted in $((SECONDS - t0)) s" >&2
}
for side in base new; do
  if [ $side = base ]; then init=$base_init plugin=$base_plugin; else init=$new_init plugin=$new_plugin; fi
  boot "$side-matrix" "$init" "$plugin" --profile --
  boot "$side-cache" "$init" "$plugin" --cache -- "${cached[@]}"
done
status=0
for kind in matrix cache; do
  echo "same-behaviour: $kind"
  python3 - "$out/base-$kind.json" "$out/new-$kind.json" <<'EOF' || status=1
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
        # a count under a hundredth an event (a tick's share) moves by
        # more than 0.1% and means nothing
        if d > 0.1 and abs(y - x) >= 0.01:
            bad.append(f"{name}: {k} {x:.6g} against {y:.6g} ({d:.3f}%)")
    if kb != kn:
        dk = abs((kn or 0) - (kb or 0)) / max(abs(kb or 0), 1e-12) * 100
        bad.append(f"{name}: kernel insn/event {kb:.6g} against {kn:.6g} ({dk:.4f}%)")
    print(f"{name:34} {b['status']:11} kernel insn/event {kb} / {kn}  figures within {worst:.4f}%")
for line in bad:
    print("FAIL", line)
print(f"{len(base)} results, {len(bad)} failures")
sys.exit(1 if bad else 0)
EOF
done
exit $status
