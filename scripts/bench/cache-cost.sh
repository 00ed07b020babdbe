#!/usr/bin/env bash
# The cost of `vm --cache` (issue 35, docs/profile.md): boots one kernel
# three times on the same benchmarks, one after another under the icount
# meter: unprofiled, --profile and --cache, and prints each boot's wall
# time and its ratio to the unprofiled one. Checks what the model must not
# change: the rates and the kernel's instructions per event of the
# profiled boot, bit for bit (the guest is the same; an unprofiled guest
# marks no windows, which moves its rates by hundredths of a percent at
# most: printed, as profile-proof.sh bounds it). Wall times
# depend on the host and its load (the load average is printed); the
# counts do not.
#
#   scripts/bench/cache-cost.sh [KERNEL] [-- RUN-OPTIONS]   (default debian:6.1.0,
#                                                      the default benchmark set)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
bench_args "$@"
for mode in plain profile cache; do
  flag=(); [ "$mode" != plain ] && flag=("--$mode")
  mkdir -p "$out/$mode"
  echo "cache-cost: booting $kernel ($mode), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  "$trig" vm -k "$kernel" --jobs 1 "${flag[@]}" --out "$out/$mode" -q -- "${run_opts[@]}" >/dev/null
done
python3 - "$out"/plain/*.json "$out"/profile/*.json "$out"/cache/*.json <<'PY'
import json, sys
plain, prof, cache = (json.load(open(p)) for p in sys.argv[1:])
def results(d):
    return {r["name"]: r for r in d["runs"][0]["report"]["results"] if r["status"] == "ok"}
wall = [d["runs"][0]["wall_s"] for d in (plain, prof, cache)]
n = len(results(plain))
print(f"{n} benchmarks ok, {plain['kernel']['spec']}, {plain['vm']['arch']}")
for name, w in zip(("unprofiled", "--profile", "--cache"), wall):
    print(f"  {name:<11} {w:8.1f} s  {w / wall[0]:5.2f}x")
rp, rc, pp = results(plain), results(cache), results(prof)
same_rate = all(pp[k]["summary"]["mean"] == rc[k]["summary"]["mean"] for k in pp if k in rc)
same_kernel = all(pp[k]["profile"]["kernel"] == rc[k]["profile"]["kernel"] for k in pp if k in rc)
moved = max(abs(rc[k]["summary"]["mean"] / rp[k]["summary"]["mean"] - 1) * 100 for k in rp if k in rc)
print(f"under --profile and --cache: rates identical {same_rate}, kernel insn/event identical "
      f"{same_kernel}; largest rate difference unprofiled against --cache {moved:.5f}% (bound 0.05%)")
sys.exit(0 if same_rate and same_kernel and moved <= 0.05 and set(rp) == set(pp) == set(rc) else 1)
PY
