# Sourced by setup.sh, bisect.sh, nightly.sh and sweep.sh: can this machine's QEMU
# load the profiling plugin? It needs TCG plugin API 4, QEMU 9.2 or newer
# (Ubuntu 24.04 has 8.2, Debian bookworm 7.2): an older one fails every
# profiled boot, so the scripts say so once, before the first build, and
# measure unprofiled (or stop, with --require-profile).
# shellcheck shell=bash

# qemu_plugin_ok WHO BIN: 0 when BIN is QEMU 9.2 or newer; else 1, with
# why on stderr, prefixed by WHO
qemu_plugin_ok() {
  local who=$1 bin=$2 line major minor
  if ! line=$("$bin" --version 2>/dev/null | head -n 1) || [ -z "$line" ]; then
    echo "$who: no $bin on PATH: the profiling plugin cannot be loaded" >&2
    return 1
  fi
  if [[ ! $line =~ version\ ([0-9]+)\.([0-9]+) ]]; then
    echo "$who: cannot read QEMU's version from '$line' ($bin --version)" >&2
    return 1
  fi
  major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
  if [ "$major" -gt 9 ] || { [ "$major" -eq 9 ] && [ "$minor" -ge 2 ]; }; then
    return 0
  fi
  echo "$who: $bin is QEMU $major.$minor ('$line'); the profiling plugin needs TCG plugin API 4, QEMU 9.2 or newer (docs/profile.md; the workflows' pinned image has 10.0)" >&2
  return 1
}

# profile_or_not WHO BIN REQUIRE: whether to boot with --profile when the
# plugin is built and profiling is wanted: 0 yes; 1 no, said once (the
# boots measure unprofiled: no kernel metric); REQUIRE=1 exits 2 instead
profile_or_not() {
  local who=$1 bin=$2 require=$3
  qemu_plugin_ok "$who" "$bin" && return 0
  if [ "$require" = 1 ]; then
    echo "$who: --require-profile: stopping before any build" >&2
    exit 2
  fi
  echo "$who: measuring unprofiled (no kernel metric); --require-profile stops instead" >&2
  return 1
}

# profiling WHO BIN WANT REQUIRE PLUGIN: the vm flag of the boots, printed:
# WANT (--profile or --cache; empty when none is wanted) when the plugin
# file PLUGIN is there and QEMU BIN can load it; else nothing, said once,
# and the boots measure unprofiled. REQUIRE=1 refuses to go on unprofiled:
# returns 2 (the caller exits), before any build. The one decision of
# bisect.sh, sweep.sh and nightly.sh.
profiling() {
  local who=$1 bin=$2 want=$3 require=$4 plugin=$5
  if [ -z "$want" ]; then
    [ "$require" = 0 ] || { echo "$who: --require-profile, but these boots are not profiled: --no-profile, --meter time, or KVM without --meter icount" >&2; return 2; }
  elif [ ! -f "$plugin" ]; then
    [ "$require" = 0 ] || { echo "$who: --require-profile: no plugin at $plugin (scripts/build.sh, or TRIG_INIT_PLUGIN)" >&2; return 2; }
  elif (profile_or_not "$who" "$bin" "$require"); then
    echo "$want"
  else
    # profile_or_not exits 2 with REQUIRE=1, in its subshell
    [ "$require" = 0 ] || return 2
  fi
  return 0
}
