#!/usr/bin/env bash
# The cost of the coherence model (docs/meter.md, "Several producers"):
# boots one kernel twice, one after the other under the icount meter, on
# the same benchmarks: --profile with one producer, then `-p 2` (two
# vCPUs, the model on), and prints each boot's wall time, their ratio and
# the -p 2 boot's statuses: every benchmark must end ok, or unsupported
# with a reason (a one-producer family). Wall times depend on the host and
# its load (the load average is printed); the counts do not.
#
#   scripts/bench/coherence-cost.sh [KERNEL] [-- RUN-OPTIONS]   (default debian:6.1.0,
#                                                          the default benchmark set)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
bench_args "$@"
echo "coherence-cost: booting $kernel (--profile), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$trig" vm -k "$kernel" --meter icount --jobs 1 --profile --out "$out/profile" -q -- "${run_opts[@]}" >/dev/null
echo "coherence-cost: booting $kernel (-p 2), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$trig" vm -k "$kernel" --meter icount --jobs 1 --out "$out/model" -q -- -p 2 "${run_opts[@]}" >/dev/null || true
python3 - "$out"/profile/*.json "$out"/model/*.json <<'PY'
import json, sys
prof, model = (json.load(open(p)) for p in sys.argv[1:])
wall = [d["runs"][0]["wall_s"] for d in (prof, model)]
print(f"{prof['kernel']['spec']}, {prof['vm']['arch']}")
print(f"  --profile, 1 vCPU   {wall[0]:8.1f} s")
print(f"  -p 2, the model     {wall[1]:8.1f} s  {wall[1] / wall[0]:5.2f}x")
results = (model["runs"][0].get("report") or {}).get("results", [])
bad = [r for r in results if r["status"] not in ("ok", "unsupported")
       or (r["status"] == "unsupported" and not r.get("reason", "").startswith("needs "))]
modelled = sum(1 for r in results if (r.get("profile") or {}).get("contention"))
print(f"  -p 2: {len(results)} results, {modelled} with the model's figures, "
      f"{sum(r['status'] == 'unsupported' for r in results)} unsupported, {len(bad)} otherwise")
for r in bad:
    print(f"    {r['name']}: {r['status']}: {r.get('reason', '')}")
sys.exit(1 if bad or not results else 0)
PY
