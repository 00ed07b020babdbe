#!/usr/bin/env bash
# Public type names (pub struct/enum/trait/type, any pub(...) visibility)
# defined more than once under init/: one meaning per name (issue 23).
# Prints "COUNT NAME: FILES" per collision and exits 1 when there is one.
#
#   scripts/name-collisions.sh [DIR]    (DIR: another checkout's root)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
grep -rEo --include='*.rs' '^\s*pub(\([a-z]+\))? +(struct|enum|trait|type) +[A-Za-z_][A-Za-z0-9_]*' init |
  sed -E 's/^([^:]+):.*(struct|enum|trait|type) +([A-Za-z0-9_]+)$/\3 \1/' |
  sort -u |
  awk '{files[$1] = files[$1] " " $2; n[$1]++}
       END {bad = 0; for (t in n) if (n[t] > 1) {print n[t], t ":" files[t]; bad++}
            print bad " names defined more than once" > "/dev/stderr"; exit bad > 0}' |
  sort -k2
