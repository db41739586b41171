#!/usr/bin/env bash
# Parquet vs loose files through the whole loader (issue 6: parquet must cost <= 5 % throughput).
#
#   bench/loader/parquet_bench.sh [BUILD_DIR=build] [DATA_DIR=/tmp/bt-cartoons] [PARQUET=/tmp/pqbench/train-0.parquet]
#                                   [REPEATS=3] [SAMPLES=1024] [extra bench-loader flags for the parquet runs...]
#
# Makes DATA_DIR with `bridgetune synth` (2000 rows, seed 0) and PARQUET from it with folder_to_parquet.mjs
# (100-row groups, SNAPPY) when missing. Then, per repetition, in this order (ABAB...): bench-loader on the
# folder, bench-loader on the parquet file; both 2 workers, decoded cache off, shuffled (parquet: its default
# locality order unless the extra flags say otherwise, e.g. --shuffle_window_row_groups 0 for fully random).
# Prints the medians and ratio = parquet / loose (goal >= 0.95).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
DATA=${2:-/tmp/bt-cartoons}
PARQUET=${3:-/tmp/pqbench/train-0.parquet}
REPEATS=${4:-3}
SAMPLES=${5:-1024}
shift $(( $# < 5 ? $# : 5 ))
EXTRA=("$@")
BT=$BUILD/bridgetune
export OPENBLAS_NUM_THREADS=1

[ -x "$BT" ] || { echo "no $BT: build the bridgetune target first" >&2; exit 1; }
[ -f "$DATA/captions.jsonl" ] || "$BT" synth --out "$DATA" --n 2000 --seed 0 >&2
if [ ! -f "$PARQUET" ]; then
  mkdir -p "$(dirname "$PARQUET")"
  node "$ROOT/bench/loader/folder_to_parquet.mjs" "$DATA" "$PARQUET" >&2
fi

COMMON=(--workers 2 --batch 32 --samples "$SAMPLES" --repeats 1 --decoded_cache_mb 0 --json)
echo "# $(date -u) $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
for r in $(seq 1 "$REPEATS"); do
  "$BT" bench-loader --data "$DATA" "${COMMON[@]}" | sed 's/^/loose /' >>"$LOG"
  "$BT" bench-loader --data "$PARQUET" --caption_column image_description "${COMMON[@]}" ${EXTRA[@]+"${EXTRA[@]}"} \
    | sed 's/^/parquet /' >>"$LOG"
  echo "# repetition $r done, load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

/usr/bin/python3 - "$LOG" <<'PY'
import json, statistics, sys
runs, read = {}, {}
for line in open(sys.argv[1]):
    tag, _, rest = line.partition(" ")
    d = json.loads(rest)
    runs.setdefault(tag, []).append(d["samples_per_s"])
    read.setdefault(tag, []).append(d["read_ms"])
    if tag == "parquet":
        window = d.get("shuffle_window_row_groups")
med = {k: statistics.median(v) for k, v in runs.items()}
for k in ("loose", "parquet"):
    print(f"{k:8s} median {med[k]:7.1f} samples/s   runs {', '.join(f'{x:.1f}' for x in runs[k])}"
          f"   read_ms median {statistics.median(read[k]):.3f}")
print(f"parquet shuffle_window_row_groups = {window}")
print(f"ratio = parquet / loose = {med['parquet'] / med['loose']:.3f}   (goal >= 0.95)")
PY
