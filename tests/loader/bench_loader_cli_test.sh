#!/usr/bin/env bash
# bench-loader end to end: JSON lines per worker count, a corrupt image stops with one line naming it, and
# --on_bad_sample skip reports it instead.  usage: bench_loader_cli_test.sh BRIDGETUNE
set -euo pipefail
BT=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$BT" synth --out "$T/d" --n 24 --seed 3 --threads 1 --min_width 320 --max_width 400 >/dev/null
out=$("$BT" bench-loader --data "$T/d" --workers 0,2 --batch 4 --samples 8 --repeats 1 --image_size 64 --json)
[ "$(echo "$out" | grep -c '"samples_per_s"')" = 2 ] || { echo "expected 2 JSON lines: $out"; exit 1; }
echo "$out" | grep -q '"workers": 2' || { echo "no workers=2 line: $out"; exit 1; }
"$BT" bench-loader --data "$T/d/captions.jsonl" --workers 1 --batch 4 --samples 8 --repeats 1 --image_size 64 \
  | grep -q '^| 1 |' || { echo "no table row"; exit 1; }
first=$(ls "$T/d/images" | head -1)
echo "not a jpeg" > "$T/d/images/$first"
if err=$("$BT" bench-loader --data "$T/d" --workers 2 --batch 4 --samples 24 --repeats 1 --image_size 64 \
    --seed 1 2>&1); then
  echo "a corrupt image must fail: $err"; exit 1
fi
[ "$(echo "$err" | wc -l)" = 1 ] || { echo "expected one line: $err"; exit 1; }
echo "$err" | grep -q "error: .*$first" || { echo "error does not name the file: $err"; exit 1; }
"$BT" bench-loader --data "$T/d" --workers 2 --batch 4 --samples 24 --repeats 1 --image_size 64 \
  --on_bad_sample skip --json 2>"$T/err" | grep -q '"skipped": [1-9]' || { echo "skip not reported"; exit 1; }
grep -q "skipped .* bad samples" "$T/err" || { echo "no skip report on stderr"; cat "$T/err"; exit 1; }
echo ok
