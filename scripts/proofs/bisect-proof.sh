#!/usr/bin/env bash
# Proves scripts/bisect.sh on a real kernel history with a planted
# regression (issue "bisect proof"):
#
#   scripts/proofs/bisect-proof.sh [--commits N] [--spins N | --delay-ns NS] [--plant K]
#                           [--break K] [--unmeasured] [--seed S] [--tree DIR]
#                           [--meter icount|time] [--runs R] [--bench GLOB]
#                           [--reduced] [--vmtest] [-- RUN-OPTIONS]
#
# Makes a git history from Debian's linux-source-6.1: the pristine tree,
# then N (8) commits that touch unbuilt drivers' comments and strings, one
# of which (K, random by seed unless given) plants a slowdown in
# __set_task_comm(), which every rename-* benchmark goes through: under
# the icount meter (the default) N (1) increments of a volatile counter, a
# few instructions, under 1% of a rename; under --meter time ndelay(NS)
# (500), which TCG's wall clock needs to see. With
# --unmeasured the planted delay goes to a path nothing measures (the
# uname syscall) instead, and the bisect must refuse. --break K makes
# commit K fail to build (fixed by the next), which must be skipped.
# Then runs `git bisect run scripts/bisect.sh --bench 'rename-*'` and
# checks that it ends on the planted commit. Prints steps and timings.
# --reduced is the CI variant: 3 commits and rename-base alone (with
# --meter time a 2 us delay and 1-second runs).
# --vmtest builds every commit with kconfigs/vmtest.config too, so that
# scripts/proofs/kernel-test.sh --out can build its kernel in this build
# directory incrementally (CI) instead of from scratch.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
commits=8; delay=""; spins=1; plant=""; brk=""; unmeasured=0; seed=$RANDOM; tree=$top/target/bisect-tree
runs=""; meter=icount; reduced=0; bench='rename-*'; vmtest=0; run_opts=()
while [ $# -gt 0 ]; do
  case $1 in
    --commits) commits=$2; shift 2 ;;
    --delay-ns) delay=$2; shift 2 ;;
    --spins) spins=$2; shift 2 ;;
    --meter) meter=$2; shift 2 ;;
    --plant) plant=$2; shift 2 ;;
    --break) brk=$2; shift 2 ;;
    --unmeasured) unmeasured=1; shift ;;
    --seed) seed=$2; shift 2 ;;
    --tree) tree=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --reduced) commits=3; bench=rename-base; reduced=1; shift ;;
    --vmtest) vmtest=1; shift ;;
    --) shift; run_opts=("$@"); break ;;
    *) echo "bisect-proof: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ "$meter" = time ]; then
  # TCG's wall clock sees only large slowdowns, and needs boots to see them
  runs=${runs:-6}
  if [ "$reduced" = 1 ]; then delay=${delay:-2000}; [ ${#run_opts[@]} -gt 0 ] || run_opts=(-w 0 -d 1); fi
  delay=${delay:-500}
  slow="ndelay($delay);"; what="ndelay($delay)"
else
  runs=${runs:-1}
  slow="{ static volatile unsigned long trig_sink; unsigned int trig_i; for (trig_i = 0; trig_i < $spins; trig_i++) trig_sink++; }"
  what="$spins volatile increment(s)"
fi
RANDOM=$seed
plant=${plant:-$(( RANDOM % commits + 1 ))}
if [ "$brk" = "$plant" ]; then
  echo "bisect-proof: --break $brk is the planted commit; pick another" >&2
  exit 2
fi
echo "bisect-proof: $commits commits, $what planted at commit $plant$([ "$unmeasured" = 1 ] && echo ' (unmeasured path)')${brk:+, build broken at commit $brk}, seed $seed"

# --vmtest: the fragments' config with vmtest's, as bisect.sh's base
proof_branch "$tree" proof "$vmtest"
tree=$PWD
# a fresh bisect state, but the build directory stays: rebuilds are incremental
st="$(git rev-parse --git-dir)/trig-bisect"
rm -rf "$st/good.img" "$st/bad.img" "$st/current.img" "$st/runs" "$st/steps.log"
commit() { proof_git commit -qam "$1"; }
# files the tinyconfig-based build never compiles
harmless=(drivers/net/ethernet/intel/e1000/e1000_main.c drivers/scsi/aacraid/linit.c
          drivers/gpu/drm/radeon/radeon_drv.c sound/pci/hda/hda_intel.c
          drivers/usb/serial/ftdi_sio.c drivers/input/joystick/xpad.c
          drivers/media/usb/uvc/uvc_driver.c fs/ext4/super.c drivers/md/raid10.c
          drivers/hwmon/coretemp.c drivers/mmc/host/sdhci.c drivers/nvme/host/pci.c)
planted=""
for k in $(seq 1 "$commits"); do
  if [ "$k" = "$plant" ]; then
    if [ "$unmeasured" = 1 ]; then
      # uname(): no benchmark calls it
      SLOW=$slow perl -0pi -e 's/(SYSCALL_DEFINE1\(newuname, struct new_utsname __user \*, name\)\n\{\n\tstruct new_utsname tmp;\n\n)/$1\t$ENV{SLOW}\n/' kernel/sys.c
      grep -q 'linux/delay.h' kernel/sys.c || sed -i '0,/#include <linux\/export.h>/s//#include <linux\/export.h>\n#include <linux\/delay.h>/' kernel/sys.c
      grep -qF "$slow" kernel/sys.c || { echo "bisect-proof: could not plant into newuname" >&2; exit 1; }
      commit "sys: slow down uname by $what (planted, unmeasured)"
    else
      SLOW=$slow perl -0pi -e 's/(void __set_task_comm\(struct task_struct \*tsk, const char \*buf, bool exec\)\n\{\n)/$1\t$ENV{SLOW}\n/' fs/exec.c
      grep -qF "$slow" fs/exec.c || { echo "bisect-proof: could not plant into __set_task_comm" >&2; exit 1; }
      grep -q 'linux/delay.h' fs/exec.c || sed -i '0,/#include <linux\/slab.h>/s//#include <linux\/slab.h>\n#include <linux\/delay.h>/' fs/exec.c
      commit "exec: slow down __set_task_comm by $what (planted)"
    fi
    planted=$(git rev-parse HEAD)
  elif [ "$k" = "$brk" ]; then
    # one commit that does not build, fixed by the next: the bisect must
    # skip it (a run of unbuildable commits next to the planted one would
    # leave git bisect rightly undecided between them)
    echo "this is not C;" >>kernel/sys.c
    commit "sys: a commit that does not build (planted)"
    sed -i '/^this is not C;$/d' kernel/sys.c
    commit "sys: fix the build again"
  else
    f=${harmless[$(( (k - 1) % ${#harmless[@]} ))]}
    sed -i "1s|^|/* trig-init bisect proof: harmless change $k */\n|" "$f"
    commit "$(basename "$f" .c): comment (harmless change $k)"
  fi
done
git log --oneline pristine..HEAD

# The plant's source line, from the build's own DWARF (the x86-64 image
# is the vmlinux): the top line of BAD's top mover in compare, in the
# bisect's last step when it measured the planted commit, and in `ab` of
# the two images this proof built (a rename-base boot each, no build).
check_plant_line() {
  local want got
  want=fs/exec.c:$(git show "$planted:fs/exec.c" | grep -nF -- "$slow" | cut -d: -f1)
  top_line() {
    jq -r 'first(.benches[] | .movers.functions[0]? // empty) | .lines[0]? // empty | "\(.file):\(.line)"' "$1" 2>/dev/null
  }
  for cmp in "$st/runs/bad-check/compare.json" "$st/runs/${planted:0:12}/compare.json"; do
    [ -f "$cmp" ] || continue
    got=$(top_line "$cmp")
    [ "$got" = "$want" ] ||
      { echo "bisect-proof: FAILED: $cmp names line '${got:-none}', planted at $want" >&2; exit 1; }
  done
  "$trig" ab -q -k "$st/good.img" -k "$st/bad.img" --profile --out "$st/runs/ab-lines" \
    -- --filter rename-base >"$st/runs/ab-lines.txt" 2>&1 || [ $? -eq 1 ]
  grep -qE "^ +$want +\+" "$st/runs/ab-lines.txt" ||
    { echo "bisect-proof: FAILED: ab does not name the planted line $want ($st/runs/ab-lines.txt)" >&2; exit 1; }
  echo "bisect-proof: OK: compare, the last step and ab name the planted line $want"
}

start=$(date +%s)
git bisect start HEAD pristine >/dev/null
set +e
threshold=(); [ "$meter" = time ] && threshold=(--threshold 5)
git bisect run "$top/scripts/bisect.sh" --bench "$bench" --meter "$meter" "${threshold[@]}" --runs "$runs" "${proof_base[@]}" ${run_opts[@]+-- "${run_opts[@]}"} 2>&1 | tee "$top/target/bisect-proof.log"
rc=${PIPESTATUS[0]}
set -e
total=$(( $(date +%s) - start ))
found=$(git rev-parse --verify -q refs/bisect/bad || true)
echo "--- bisect.sh steps ($(git rev-parse --git-dir)/trig-bisect/steps.log)"
cat "$(git rev-parse --git-dir)/trig-bisect/steps.log" 2>/dev/null || true
git bisect reset -q 2>/dev/null || true
echo "--- total ${total} s, git bisect run exit $rc"
if [ "$unmeasured" = 1 ]; then
  grep -q "no regression between GOOD" "$top/target/bisect-proof.log" ||
    { echo "bisect-proof: FAILED: the bisect did not refuse" >&2; exit 1; }
  echo "bisect-proof: OK: refused to bisect an unmeasured change"
else
  grep -q "^$planted is the first bad commit" "$top/target/bisect-proof.log" ||
    { echo "bisect-proof: FAILED: ended on ${found:0:12}, planted ${planted:0:12}" >&2; exit 1; }
  echo "bisect-proof: OK: ended on the planted commit ${planted:0:12}"
  # profiled (icount, plugin built): BAD's first mover is where it was
  # planted (compare's JSON: the first benchmark with movers, its first)
  mover=$(jq -r 'first(.benches[] | .movers.functions[0]? // empty) | "\(.name) \(.change * 100 | round / 100)"' \
    "$st/runs/bad-check/compare.json" 2>/dev/null)
  if [ -n "$mover" ]; then
    read -r first change <<<"$mover"
    [ "$first" = __set_task_comm ] ||
      { echo "bisect-proof: FAILED: BAD's top mover is '$first', planted in __set_task_comm" >&2; exit 1; }
    echo "bisect-proof: OK: BAD's top mover is __set_task_comm: $change insn/event"
    check_plant_line
  fi
fi
