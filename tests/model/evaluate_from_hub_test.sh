#!/bin/sh
# `bridgetune evaluate` by hub id: a pytorch_model.bin checkpoint with tokenizer.json alone, found in a fake HF cache
# (make_torch_checkpoints.py), scores a generated matching split; every row is scored and written out.
# usage: evaluate_from_hub_test.sh BRIDGETUNE WORK_DIR CACHE_DIR
set -eu
bt=$1 work=$2 cache=$3
rm -rf "$work" && mkdir -p "$work"
"$bt" synth --accents --out "$work/data" --n 10 --images 5 --min_width 64 --max_width 96 >/dev/null
"$bt" evaluate --model_name_or_path bt-test/tiny-bin --cache_dir "$cache" --validation_file "$work/data/matching.jsonl" \
  --output_dir "$work/out" --dataloader_num_workers 0 --max_seq_length 32 >"$work/eval.log" 2>&1 || { cat "$work/eval.log"; exit 1; }
grep -q '"eval_matching_count": 10' "$work/out/eval_results.json" || { cat "$work/out/eval_results.json"; exit 1; }
[ "$(wc -l < "$work/out/predictions.jsonl")" -eq 10 ] || { echo "predictions.jsonl should hold 10 rows"; exit 1; }
if "$bt" evaluate --model_name_or_path bt-test/no-such-model --cache_dir "$cache" --validation_file "$work/data/matching.jsonl" \
     --output_dir "$work/out2" >"$work/missing.log" 2>&1; then
  echo "a missing hub model was accepted"; exit 1
fi
grep -q "huggingface-cli download bt-test/no-such-model" "$work/missing.log" || { cat "$work/missing.log"; exit 1; }
