#!/bin/sh
# Loading a large-preset pytorch_model.bin (random weights written by python3-torch, ~3.5 GB, in $DIR, never
# committed): bridgetune's load_weights vs Python's torch.load + copy into equally sized tensors, REPEATS
# interleaved runs each in a fresh process. usage: bench/model/load_bin_bench.sh [BUILD=build] [DIR=/tmp/bt_load_bin] [REPEATS=3]
set -eu
build=${1:-build} dir=${2:-/tmp/bt_load_bin} repeats=${3:-3}
export OPENBLAS_NUM_THREADS=1
mkdir -p "$dir"
"$build/bench/bench_load_bin" names large > "$dir/names.txt"
[ -f "$dir/pytorch_model.bin" ] || /usr/bin/python3 bench/model/load_bin_peer.py write "$dir/names.txt" "$dir"
ls -l "$dir/pytorch_model.bin"
cat "$dir/pytorch_model.bin" > /dev/null  # both sides read from a warm page cache
i=0
while [ $i -lt "$repeats" ]; do
  "$build/bench/bench_load_bin" load "$dir" large
  /usr/bin/python3 bench/model/load_bin_peer.py load "$dir/names.txt" "$dir"
  i=$((i + 1))
done
