# Sourced by setup.sh and lib.sh: can this machine's QEMU
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
