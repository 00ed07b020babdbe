#!/usr/bin/env bash
# Upstream's bench scripts (tools/testing/selftests/bpf/benchs/run_*.sh
# with their run_common.sh) from Debian unstable's newest linux-source,
# unchanged: prints the directory that holds them as benchs/, the layout
# the scripts source each other by (`source ./benchs/run_common.sh`).
#   scripts/upstream-scripts.sh [--source-version X.Y]
# Fetched with a private apt configuration (the host's sources, lists and
# package cache left alone, as `trig-init vm -k debian:unstable` does)
# into the cache, TRIG_CACHE (default ~/.cache/trig-init), once a
# version: about 160 MB downloaded and 15 s to read the scripts out of
# the tarball, then kept (a few KB) under upstream-scripts/VERSION.
set -euo pipefail
cache=${TRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trig-init}
version=""
while [ $# -gt 0 ]; do
  case $1 in
    --source-version) version=$2; shift 2 ;;
    *) echo "upstream-scripts: unknown option $1" >&2; exit 2 ;;
  esac
done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || { echo "upstream-scripts: no $keyring (apt-get install debian-archive-keyring)" >&2; exit 2; }
apt_dir=$cache/apt-unstable-source
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian unstable main" >"$apt_dir/sources.list"
apt_opts=(-q "-oDir::Etc::SourceList=$apt_dir/sources.list" -oDir::Etc::SourceParts=-
  "-oDir::State::Lists=$apt_dir/lists" "-oDir::Cache=$apt_dir/cache")
updated=0
update() {
  apt-get "${apt_opts[@]}" update >&2 || { echo "upstream-scripts: cannot read Debian unstable's package lists" >&2; exit 1; }
  updated=1
}
if [ -z "$version" ]; then
  update
  # the newest linux-source-X.Y, by version order
  version=$(apt-cache "${apt_opts[@]}" pkgnames linux-source- |
    sed -n 's/^linux-source-\([0-9]*\.[0-9]*\)$/\1/p' | sort -V | tail -n 1)
  [ -n "$version" ] || { echo "upstream-scripts: Debian unstable has no linux-source-X.Y" >&2; exit 1; }
fi
case $version in
  [0-9]*.[0-9]*) ;;
  *) echo "upstream-scripts: --source-version takes X.Y, not '$version'" >&2; exit 2 ;;
esac
out=$cache/upstream-scripts/$version
if [ ! -f "$out/benchs/run_common.sh" ]; then
  work=$(mktemp -d "$cache/upstream-scripts.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  [ "$updated" = 1 ] || update
  (cd "$work" && apt-get "${apt_opts[@]}" download "linux-source-$version" >&2) ||
    { echo "upstream-scripts: cannot download linux-source-$version from Debian unstable" >&2; exit 1; }
  dpkg-deb --fsys-tarfile "$work"/linux-source-"$version"_*.deb |
    tar -x -C "$work" "./usr/src/linux-source-$version.tar.xz"
  tar -x -C "$work" -f "$work/usr/src/linux-source-$version.tar.xz" --wildcards \
    "linux-source-$version/tools/testing/selftests/bpf/benchs/run_*.sh"
  mkdir -p "$out.new/benchs"
  cp "$work/linux-source-$version/tools/testing/selftests/bpf/benchs/"run_*.sh "$out.new/benchs/"
  rm -rf "$out" && mv "$out.new" "$out"
  echo "upstream-scripts: linux-source-$version's scripts in $out/benchs" >&2
fi
echo "$out"
