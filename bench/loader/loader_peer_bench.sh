#!/usr/bin/env bash
# Loader vs the Python peer and vs the libjpeg-turbo decode limit, side by side in one run.
#
#   bench/loader/loader_peer_bench.sh [BUILD_DIR=build] [DATA_DIR=/tmp/bt-cartoons] [REPEATS=3] [SAMPLES=1024]
#
# Generates DATA_DIR with `bridgetune synth` (2000 rows, seed 0) when missing, then per repetition runs, in
# this order (ABAB...): the peer (torch DataLoader + PIL, 2 workers, both collates, the better one counts),
# `bridgetune bench-loader --workers 2` with the decoded cache off, and tj_limit (1 thread, decode only).
# Prints the medians and the two goals of issue 2:
#   ratio_vs_peer  = bridgetune(2 workers) / peer(2 workers)                 goal >= 4
#   ratio_vs_limit = bridgetune(2 workers) / (2 * tj_limit full decode/s)    goal >= 0.70
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
DATA=${2:-/tmp/bt-cartoons}
REPEATS=${3:-3}
SAMPLES=${4:-1024}
SHARED=${BT_SHARED:-$ROOT/../shared}
BT=$BUILD/bridgetune
PEER=$SHARED/peers/torch_loader_bench.py
TJ=${TMPDIR:-/tmp}/bt_tj_limit
export OPENBLAS_NUM_THREADS=1

[ -x "$BT" ] || { echo "no $BT: build the bridgetune target first" >&2; exit 1; }
if [ ! -f "$DATA/captions.jsonl" ]; then
  "$BT" synth --out "$DATA" --n 2000 --seed 0 >&2
fi
[ -x "$TJ" ] || gcc -O2 "$SHARED/peers/tj_limit.c" -lturbojpeg -o "$TJ"
IMAGES=$DATA/images
[ -d "$IMAGES" ] || IMAGES=$DATA

echo "# $(date -u) $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
LOG=$(mktemp)
for r in $(seq 1 "$REPEATS"); do
  for c in default hf; do
    /usr/bin/python3 "$PEER" --data "$DATA" --variant pil --workers 2 --batch 32 --samples "$SAMPLES" --collate "$c" \
      | sed "s/^/peer_$c /" >>"$LOG"
  done
  "$BT" bench-loader --data "$DATA" --workers 2 --batch 32 --samples "$SAMPLES" --repeats 1 \
    --decoded_cache_mb 0 --json | sed 's/^/bt /' >>"$LOG"
  "$TJ" "$IMAGES" 288 3.0 | grep '^{' | sed 's/^/tj /' >>"$LOG"
  echo "# repetition $r done, load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

/usr/bin/python3 - "$LOG" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    tag, _, rest = line.partition(" ")
    d = json.loads(rest)
    v = d.get("samples_per_s", d.get("full_images_per_s"))
    runs.setdefault(tag, []).append(v)
med = {k: statistics.median(v) for k, v in runs.items()}
peer = max(med.get("peer_default", 0), med.get("peer_hf", 0))
bt, tj = med["bt"], med["tj"]
for k, v in sorted(runs.items()):
    print(f"{k:13s} median {med[k]:8.1f}   runs {', '.join(f'{x:.1f}' for x in v)}")
print(f"peer (better collate, 2 workers): {peer:.1f} samples/s")
print(f"ratio_vs_peer  = {bt / peer:.2f}   (goal >= 4)")
print(f"ratio_vs_limit = {bt / (2 * tj):.2f}   (goal >= 0.70; limit = 2 x {tj:.1f} decode/s)")
PY
rm -f "$LOG"
