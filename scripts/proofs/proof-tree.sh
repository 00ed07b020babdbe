#!/usr/bin/env bash
# Makes DIR a git tree of Debian's linux-source-6.1, its one commit tagged
# `pristine`, for the proofs that plant histories on it (bisect-proof.sh,
# sweep-proof.sh); does nothing when DIR is one already.
#
#   scripts/proofs/proof-tree.sh DIR
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
tree=${1:?usage: $0 DIR}
[ -d "$tree/.git" ] && exit 0
[ -f /usr/src/linux-source-6.1.tar.xz ] || { echo "proof-tree: no /usr/src/linux-source-6.1.tar.xz (scripts/setup.sh --kernel installs it)" >&2; exit 2; }
mkdir -p "$tree"
tar -C "$tree" --strip-components=1 -xf /usr/src/linux-source-6.1.tar.xz
git -C "$tree" init -q
# Debian's tree ignores everything at its top level (/* in .gitignore)
proof_git -C "$tree" add -A -f .
proof_git -C "$tree" commit -qm "pristine linux-source-6.1"
git -C "$tree" tag pristine
