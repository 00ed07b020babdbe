#!/usr/bin/env bash
# Harness parity, counted: upstream's 6.1 `bench` (built from Debian's
# linux-source-6.1 with the selftests Makefile) and trig-init in ONE icount
# boot of the same kernel, then instructions per event side by side.
#
#   scripts/bench/upstream-bench.sh [-k KERNEL] [--src TARBALL] [--work DIR]
#                             [--set 6.1|7.2] [--only NAME]... [--build-only]
#                             [--results DIR]
#
#   -k        the kernel (default debian:6.1.0, Debian's newest 6.1.0-N;
#             x86-64 only)
#   --src     the kernel source tarball (default
#             /usr/src/linux-source-6.1.tar.xz: apt-get install linux-source-6.1)
#   --work    where the source is unpacked and bench built (default
#             target/upstream-bench; kept, so a second run only boots)
#   --only    one trig-init benchmark name of the table below (repeatable)
#   --results re-read an earlier run's directory instead of booting
#   --set     the table: 6.1 (default: what 6.1's bench has) or 7.2 (the
#             LPM trie and htab-mem, which came later: with --src 7.2's
#             tarball, -k a 7.2 vmlinux, and a clang that builds 7.2's
#             selftests, CLANG=clang-19 LLC=llc-19 LLVM_STRIP=llvm-strip-19
#             on Debian 12)
#
# What is built: tools/testing/selftests/bpf's `bench` target only (its
# libbpf, bpftool and skeletons come with it), against the BTF of the
# kernel to boot, dynamically linked as the Makefile links it; its shared
# libraries and their loader go into the initramfs at their own paths.
# One change to upstream's source, in the unpacked copy only: the 6.1 bench
# opens and loads every program of progs/trigger_bench.c at once, and Debian
# 6.1 refuses fentry.s and fmod_ret on __x64_sys_getpgid (no
# CONFIG_FUNCTION_ERROR_INJECTION), which fails every trig-* benchmark; the
# two sections get libbpf's "?" (autoload off), so the others load. None of
# upstream's code goes into trig-init.
#
# How it runs: trig-init vm with TRIG_INIT_EXTRA_ROOT (undocumented: a tree
# added to the initramfs; PID 1 runs /.trig-extra/run before the matrix), a
# busybox sh script that runs `bench -w 1 -d 1 NAME` for each upstream
# benchmark; then the matrix of the matching trig-init benchmarks at the
# icount defaults. Under icount M/s is millions of events per 1e9 guest
# instructions, so 1000 / rate is instructions per event.
# Needs: clang, make, gcc, libelf-dev, zlib1g-dev, busybox-static.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
kernel=debian:6.1.0
src=/usr/src/linux-source-6.1.tar.xz
work=target/upstream-bench
only=(); build_only=0; results=""; set=6.1
while [ $# -gt 0 ]; do
  case $1 in
    -k) kernel=$2; shift 2 ;;
    --src) src=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --build-only) build_only=1; shift ;;
    --results) results=$2; shift 2 ;;
    --set) set=$2; shift 2 ;;
    *) echo "upstream-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done

# upstream 6.1 name -> trig-init name[ -> upstream's options, `+` for a
# space], benchmarks both have and Debian 6.1 runs (fmod_ret and fentry.s
# need FUNCTION_ERROR_INJECTION); strncmp at upstream's default length,
# 32; the cache benchmarks of local storage with the matrix's 17 maps (the
# control with its one), where upstream's default is 1000
pairs=(
  trig-base:trig-base
  trig-tp:trig-tp
  trig-rawtp:trig-rawtp
  trig-kprobe:trig-kprobe
  trig-fentry:trig-fentry
  trig-uprobe-base:trig-usermode-count
  trig-uprobe-with-nop:trig-uprobe-nop
  trig-uretprobe-with-nop:trig-uretprobe-nop
  trig-uprobe-without-nop:trig-uprobe-ret
  trig-uretprobe-without-nop:trig-uretprobe-ret
  rename-base:rename-base
  rename-kprobe:rename-kprobe
  rename-kretprobe:rename-kretprobe
  rename-rawtp:rename-rawtp
  rename-fentry:rename-fentry
  rename-fexit:rename-fexit
  strncmp-no-helper:strncmp-no-helper:--cmp-str-len+32
  strncmp-helper:strncmp-helper:--cmp-str-len+32
  count-global:count-global
  count-local:count-local
  bpf-loop:bpf-loop
  bloom-lookup:bloom-lookup
  bloom-update:bloom-update
  hashmap-without-bloom:hashmap-without-bloom
  hashmap-with-bloom:hashmap-with-bloom
  bpf-hashmap-ful-update:bpf-hashmap-full-update
  local-storage-cache-seq-get:local-storage-cache-seq-get:--nr_maps+17
  local-storage-cache-int-get:local-storage-cache-int-get:--nr_maps+17
  local-storage-cache-hashmap-control:local-storage-cache-hashmap-control:--nr_maps+1
)
# trig-init's own options for the set's boot: 7.2's at upstream's
# 10,000 trie operations a test run (the matrix makes 250), measured 2
# guest seconds (upstream's 1 s holds about 80 frees of a trie, the
# matrix's window held 7, which spread from 11.6 to 19.4 ms each)
opts=(--cmp-str-len 32)
case $set in
  6.1) ;;
  7.2)
    pairs=()
    for op in noop baseline lookup insert update delete free; do
      pairs+=("lpm-trie-$op:lpm-trie-$op:--nr_entries+10000")
    done
    # the hash map's lookup, the resizable hash map's, rhtab-mem and
    # bpf-nop, which 6.1's bench lacks too; htab-mem and rhtab-mem after
    # 3 s of warm-up (at 1 rhtab-mem's table was still growing, 40.67 then
    # 50.99 k/s, and htab-mem first in a boot was 21.29 then 26.82)
    pairs+=(htab-mem:htab-mem:-w+3 rhtab-mem:rhtab-mem:-w+3 bpf-hashmap-lookup:bpf-hashmap-lookup
      bpf-rhashmap-lookup:bpf-rhashmap-lookup bpf-rhashmap-full-update:bpf-rhashmap-full-update
      bpf-nop:bpf-nop)
    opts+=(--nr-loops 10000 -d 2) ;;
  *) echo "upstream-bench: --set takes 6.1 or 7.2, not '$set'" >&2; exit 2 ;;
esac
# trig_name PAIR: the trig-init name of a row of the table
trig_name() { local t=${1#*:}; echo "${t%%:*}"; }
if [ ${#only[@]} -gt 0 ]; then
  sel=()
  for p in "${pairs[@]}"; do
    t=$(trig_name "$p")
    for o in "${only[@]}"; do [ "$t" = "$o" ] && sel+=("$p"); done
  done
  [ ${#sel[@]} -gt 0 ] || { echo "upstream-bench: --only matches none of the table's trig-init names" >&2; exit 2; }
  pairs=("${sel[@]}")
fi

if [ -z "$results" ]; then
  [ -x "$trig" ] || { echo "upstream-bench: no $trig (scripts/build.sh)" >&2; exit 1; }
  [ -f "$src" ] || { echo "upstream-bench: no $src (apt-get install linux-source-6.1)" >&2; exit 1; }
  bb=$(command -v busybox || true)
  file -L "$bb" 2>/dev/null | grep -q "statically linked" ||
    { echo "upstream-bench: needs a static busybox (apt-get install busybox-static)" >&2; exit 1; }
  # the kernel's vmlinux, for its BTF. vm resolves (and fetches) a Debian
  # kernel into the cache before it reads --init, so an --init that is no
  # executable stops it there, before anything boots
  case $kernel in
    debian*)
      "$trig" vm -k "$kernel" --init /dev/null -q --out "$work/resolve" >/dev/null 2>&1 || true
      cache=${TRIG_CACHE:-$HOME/.cache/trig-init}
      abi=${kernel#debian}; abi=${abi#:}
      vmlinux=$(ls -d "$cache"/kernels/linux-image-"$abi"*-amd64-unsigned/vmlinux 2>/dev/null | sort -V | tail -n 1)
      ;;
    *) vmlinux=$kernel ;;
  esac
  [ -f "${vmlinux:-}" ] || { echo "upstream-bench: no vmlinux for $kernel" >&2; exit 1; }
  echo "upstream-bench: kernel $kernel, BTF from $vmlinux" >&2

  # build upstream's bench
  mkdir -p "$work"
  srcdir=$(tar -tJf "$src" 2>/dev/null | head -n 1 || true); srcdir=${srcdir%%/*}
  [ -n "$srcdir" ] || { echo "upstream-bench: $src: not a tarball" >&2; exit 1; }
  tree=$work/$srcdir
  if [ ! -d "$tree/tools/testing/selftests/bpf" ]; then
    echo "upstream-bench: unpacking $src" >&2
    tar -xJf "$src" -C "$work" "$srcdir/tools" "$srcdir/kernel/bpf" "$srcdir/include" \
      "$srcdir/arch/x86" "$srcdir/scripts" "$srcdir/Makefile"
  fi
  sb=$tree/tools/testing/selftests/bpf
  sed -i 's|SEC("fentry.s/|SEC("?fentry.s/|; s|SEC("fmod_ret/|SEC("?fmod_ret/|' "$sb/progs/trigger_bench.c"
  echo "upstream-bench: make bench (a few minutes the first time)" >&2
  # 7.2's Makefile makes libarena's skeletons for test_progs, which the
  # bench does not use and which need a newer clang than Debian 12's
  make -C "$sb" -j"$(nproc)" VMLINUX_BTF="$(realpath "$vmlinux")" \
    LIBARENA_SKEL= LIBARENA_ASAN_SKEL= ${CLANG:+CLANG=$CLANG} ${LLC:+LLC=$LLC} \
    ${LLVM_STRIP:+LLVM_STRIP=$LLVM_STRIP} "$(realpath "$sb")/bench" \
    >"$work/make.log" 2>&1 || { tail -n 30 "$work/make.log" >&2; exit 1; }
  bench=$sb/bench

  # the initramfs tree: bench, its libraries at their paths, busybox, run
  root=$work/root
  rm -rf "$root"; mkdir -p "$root/.trig-extra"
  cp "$bench" "$root/.trig-extra/bench"
  cp "$bb" "$root/.trig-extra/busybox"
  ldd "$bench" | grep -o '/[^ ]*' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  {
    echo '#!/.trig-extra/busybox sh'
    echo '# written by scripts/bench/upstream-bench.sh'
    for p in "${pairs[@]}"; do
      u=${p%%:*} args=""
      case ${p#*:} in *:*) args=${p#*:*:}; args=${args//+/ } ;; esac
      echo "echo 'upstream-bench: begin $u'"
      echo "/.trig-extra/bench -w 1 -d 1 $args $u 2>&1"
      echo "echo \"upstream-bench: end $u rc=\$?\""
    done
  } >"$root/.trig-extra/run"
  chmod 755 "$root/.trig-extra/run"
  objdump -d --no-show-raw-insn "$bench" >"$work/bench.dis"
  [ "$build_only" = 1 ] && { echo "upstream-bench: built $bench" >&2; exit 0; }

  results=results/upstream-bench-$(date +%Y%m%dT%H%M%S)
  mkdir -p "$results"
  cp "$root/.trig-extra/run" "$results/run.sh"
  filters=()
  for p in "${pairs[@]}"; do filters+=(--filter "$(trig_name "$p")"); done
  start=$(date +%s)
  # the upstream runs are 2 guest seconds each: give the boot time for them
  TRIG_INIT_EXTRA_ROOT=$(realpath "$root") "$trig" vm -k "$kernel" --meter icount \
    --timeout $(( 600 + 60 * ${#pairs[@]} )) --out "$results" --json "$results/trig-init.json" -q -- \
    "${filters[@]}" "${opts[@]}" || true
  echo "upstream-bench: one boot in $(( $(date +%s) - start )) s, $results" >&2
fi

log=$(ls "$results"/*.log 2>/dev/null | head -n 1)
[ -n "$log" ] && [ -f "$results/trig-init.json" ] ||
  { echo "upstream-bench: no console log or trig-init.json in $results" >&2; exit 1; }
printf '%s\n' "${pairs[@]}" >"$results/pairs.txt"
python3 - "$log" "$results/trig-init.json" "$results/pairs.txt" <<'EOF'
import json, re, sys
log, js, pairs = sys.argv[1:4]
up, cur = {}, None
for line in open(log, errors="replace"):
    m = re.search(r"upstream-bench: begin (\S+)", line)
    if m:
        cur = m.group(1)
    if "upstream-bench: end " in line:
        cur = None
    # hits, throughput (bpf-loop), hits throughput (local storage): M/s;
    # where drops are counted, every operation, as trig-init's rate; the
    # full update's one line a CPU: its events a second, as timed
    # an ops Summary's latency (the trie's, what its program timed; and
    # bpf-loop's): at one producer its throughput to more digits (ns, or
    # ms for the free: millions of events per 1e9 instructions, as every
    # rate here)
    m = re.search(r"Summary: throughput .*latency\s+([0-9.]+) (ns|ms)/op", line)
    if m and cur:
        up[cur] = 1e3 / float(m.group(1)) / (1e6 if m.group(2) == "ms" else 1.0)
        continue
    m = (re.search(r"Summary: .*total operations\s+([0-9.]+)()", line)
         or re.search(r"Summary: (?:hits|throughput|hits throughput)\s+([0-9.]+) \S+ [0-9.]+ ?([KM]?)", line))
    if m and cur:
        # lpm-trie-free's are thousands
        up[cur] = float(m.group(1)) / (1e3 if m.group(2) == "K" else 1.0)
    # htab-mem's: thousands a producer (one here)
    m = re.search(r"Summary: per-prod-op\s+([0-9.]+)", line)
    if m and cur:
        up[cur] = float(m.group(1)) / 1e3
    # the lookups' line a CPU (one here), and bpf-nop's median, both what
    # their programs timed
    m = re.search(r"cpu\d+: lookup\s+([0-9.]+)M", line)
    if m and cur:
        up[cur] = float(m.group(1))
    m = re.search(r"^\S+: median ([0-9.]+) ns/op", line)
    if m and cur:
        up[cur] = 1e3 / float(m.group(1))
    m = re.search(r"\d+:hash_map_full_perf (\d+) events per sec", line)
    if m and cur:
        up[cur] = max(up.get(cur, 0.0), int(m.group(1)) / 1e6)
doc = json.load(open(js))
ours = {}
for run in doc["runs"]:
    for r in (run.get("report") or {}).get("results", []):
        if r.get("status") == "ok" and r.get("summary"):
            ours[r["bench"]] = r["summary"]["mean"]
            # where a program times its runs (the full updates, the
            # lookups, the trie, bpf-nop), that is upstream's figure: not
            # the syscall around them, nor the frees the kernel defers past
            # them (bpf-nop's a mean, upstream's a median)
            timed = (r.get("figures") or {}).get("timed_per_op")
            if timed:
                ours[r["bench"]] = 1e3 / timed
print("| upstream bench | trig-init | upstream M/Ginsn | trig-init M/Ginsn "
      "| upstream insn/event | trig-init insn/event | ratio |")
print("|---|---|--:|--:|--:|--:|--:|")
for p in open(pairs).read().split():
    u, t, *args = p.split(":")
    a, b = up.get(u), ours.get(t)
    u = " ".join([u] + [x.replace("+", " ") for x in args])
    cells = [f"{a:.3f}" if a else "-", f"{b:.5f}" if b else "-",
             f"{1e3 / a:.1f}" if a else "-", f"{1e3 / b:.1f}" if b else "-",
             f"{b / a:.3f}" if a and b else "-"]
    print(f"| {u} | {t} | " + " | ".join(cells) + " |")
print("\nratio: upstream's instructions per event over trig-init's (above 1: trig-init "
      "is cheaper); upstream prints its rates to 3 decimals")
EOF
