#!/usr/bin/env bash
# Checks the HTML report in a real browser: makes a synthetic history (16
# nights from one real `trig-init run` of the benchmarks that need no BPF,
# trig-usermode-count 12% slower from night 10 on), writes its report,
# screenshots it with headless Chromium, and checks that the PNG is a
# picture of the page rather than a blank one.
#
#   scripts/proofs/html-screenshot.sh [OUT-DIR]     (default target/html-screenshot)
#
# Needs chromium (apt-get install chromium) and python3. Leaves
# OUT-DIR/report.html and OUT-DIR/report.png. Exit 0 when the screenshot
# passes, 1 when it does not, 2 when a tool is missing.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
out=${1:-$top/target/html-screenshot}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "html-screenshot: no chromium (apt-get install chromium)" >&2; exit 2; }
[ -x "$trig" ] || { echo "html-screenshot: no trig-init at $trig (scripts/build.sh)" >&2; exit 2; }
rm -rf "$out"; mkdir -p "$out/history"

"$trig" run --filter trig-base --filter trig-usermode-count -w 0 -d 0.3 --json "$out/run.json" 2>/dev/null
python3 - "$out/run.json" "$out/history" <<'PY'
import copy, json, sys
report = json.load(open(sys.argv[1]))
wobble = [1.0, 1.02, 0.985, 1.01, 0.99, 1.015, 0.995]
for night in range(16):
    r = copy.deepcopy(report)
    for b in r["results"]:
        slow = 0.88 if night >= 10 and b["name"] == "trig-usermode-count" else 1.0
        b["summary"]["mean"] *= wobble[night % len(wobble)] * slow
    doc = {
        "schema_version": r["schema_version"], "created": f"202611{night + 1:02}T020000Z",
        "kernel": {"spec": "synthetic", "path": "", "release": f"6.1.{night}",
                   "commit": f"{night:02x}" + "c0ffee" * 6 + "00"},
        "vm": {"arch": r["system"]["machine"], "accel": "tcg", "meter": "time",
               "cpus": r["system"]["cpus"], "memory": "1G", "append": ""},
        "runs": [{"index": 1, "status": "ok", "console_log": "", "wall_s": 1.0, "report": r}],
    }
    json.dump(doc, open(f"{sys.argv[2]}/night-{night:02}.json", "w"))
PY
"$trig" report "$out/history" -o "$out/report.html" --repo-url https://github.com/torvalds/linux
grep -q "stroke-dasharray" "$out/report.html" || { echo "html-screenshot: no change point on the page" >&2; exit 1; }

# a throwaway profile: no first-run state in the user's home
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$out/profile" --window-size=1280,1400 \
  --screenshot="$out/report.png" "file://$out/report.html" >"$out/browser.log" 2>&1 || true
[ -s "$out/report.png" ] || { echo "html-screenshot: no screenshot; see $out/browser.log" >&2; exit 1; }

# a page of charts is large and many-coloured once compressed; a blank or
# error page is a few kilobytes of one or two colours
python3 - "$out/report.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
idat, pos = b"", 8
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
channels = {2: 3, 6: 4}.get(ctype)
assert depth == 8 and channels, f"unexpected PNG format: depth {depth}, colour type {ctype}"
stride = w * channels + 1
colours = set()
for y in range(0, h, 4):
    # filter bytes make rows other than type-0 unreadable without
    # unfiltering; the distinct raw bytes still tell blank from busy
    row = raw[y * stride + 1:(y + 1) * stride]
    for x in range(0, len(row) - channels, channels * 4):
        colours.add(row[x:x + 3])
print(f"html-screenshot: {w}x{h} PNG, {len(data)} bytes, {len(colours)} distinct sampled values")
assert w >= 1000 and h >= 1000, "too small"
assert len(data) > 30_000, "too few bytes for a page of charts"
assert len(colours) > 50, "too uniform: a blank page?"
PY
echo "html-screenshot: $out/report.png"
