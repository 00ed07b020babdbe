#!/usr/bin/env bash
# The figures behind `vm --profile` (docs/profile.md, its measured table):
# boots kernel A unprofiled once and profiled twice, and kernel B profiled
# once, on the same benchmarks, all under the icount meter, then prints
#   - the cost: wall time of a profiled boot over the unprofiled one
#     (target <= 1.3), and the largest rate change the plugin caused;
#   - A/A: the largest move of any function between the two profiled boots
#     of A (target <= 0.05 instructions per event);
#   - A -> B: compare's movers, and for each benchmark the kernel's change
#     against the measured one (for rename-base 6.1 -> 6.12, within 2%).
# Exit 1 when a target is missed.
#
#   scripts/proofs/profile-proof.sh [--arch aarch64] [A [B]] [-- RUN-OPTIONS]
#   (default debian:6.1.0 debian:6.12, 10 benchmarks)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
arch=()
if [ "${1:-}" = "--arch" ]; then arch=(--arch "$2"); shift 2; fi
a=${1:-debian:6.1.0}; b=${2:-debian:6.12}
shift $(( $# < 2 ? $# : 2 )) || true
[ "${1:-}" = "--" ] && shift
run=("$@")
[ ${#run[@]} -eq 0 ] && for f in trig-base trig-tp trig-rawtp trig-kprobe trig-kretprobe trig-fentry \
  trig-uprobe-nop rename-base rename-kprobe strncmp-no-helper; do run+=(--filter "$f"); done
host=target/x86_64-unknown-linux-gnu/release/trig-init
[ -x "$host" ] || host=$trig
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
boot() { # NAME KERNEL [vm options]
  local name=$1 kernel=$2; shift 2
  mkdir -p "$out/$name"
  "$trig" vm "${arch[@]}" -k "$kernel" --out "$out/$name" -q "$@" -- "${run[@]}" >/dev/null
  ls "$out/$name"/*.json
}
plain=$(boot plain "$a")
aa1=$(boot aa1 "$a" --profile)
aa2=$(boot aa2 "$a" --profile)
new=$(boot new "$b" --profile)
"$host" compare "$aa1" "$aa2" --format json >"$out/aa.json" || true
"$host" compare "$aa1" "$new" --format json >"$out/ab.json" || true
echo "== $a -> $b, profiled (compare's table) =="
"$host" compare "$aa1" "$new" --color never | sed -n '/^BENCHMARK/,$p' || true
python3 - "$plain" "$aa1" "$aa2" "$out/aa.json" "$out/ab.json" <<'PY'
import json, sys
plain, aa1, aa2, aa, ab = (json.load(open(p)) for p in sys.argv[1:])
ok = True
walls = [d["runs"][0]["wall_s"] for d in (plain, aa1, aa2)]
cost = (walls[1] + walls[2]) / 2 / walls[0]
rates = lambda d: {r["name"]: r["summary"]["mean"] for r in d["runs"][0]["report"]["results"] if r.get("summary")}
rp, r1 = rates(plain), rates(aa1)
moved = max(abs(r1[n] / rp[n] - 1) * 100 for n in rp)
print(f"cost: {walls[0]:.1f} s unprofiled, {walls[1]:.1f} and {walls[2]:.1f} s profiled: {cost:.2f}x (target <= 1.3); "
      f"largest rate change from profiling {moved:.5f}% (A/A bound 0.05%)")
ok &= cost <= 1.3 and moved <= 0.05
def fns(d):
    return {r["name"]: {f["name"]: f["insn"] for f in r["profile"]["functions"]}
            for r in d["runs"][0]["report"]["results"] if r.get("profile")}
f1, f2 = fns(aa1), fns(aa2)
worst = max((abs(f1[b].get(n, 0) - f2[b].get(n, 0)), b, n) for b in f1 for n in set(f1[b]) | set(f2[b]))
print(f"A/A: largest function move {worst[0]:.4f} insn/event ({worst[1]} {worst[2]}; target <= 0.05)")
ok &= worst[0] <= 0.05
print("A -> B: measured change, kernel's share, top movers (insn/event)")
for bench in ab["benches"]:
    m = bench.get("movers")
    if not m:
        continue
    share = m["kernel"] / m["total"] * 100 if abs(m["total"]) >= 1 else float("nan")
    top = ", ".join(f"{f['name']} {f['change']:+.1f}" for f in m["functions"][:4])
    print(f"  {bench['name']:<24} {m['total']:+9.2f}  kernel {m['kernel']:+9.2f} ({share:5.1f}%)  {top}")
    if bench["name"] == "rename-base" and abs(m["total"]) >= 1:
        ok &= abs(m["kernel"] - m["total"]) <= 0.02 * abs(m["total"])
sys.exit(0 if ok else 1)
PY
