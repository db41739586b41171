#!/bin/sh
# `bridgetune train` from a pytorch_model.bin found by hub id (fake HF cache from make_torch_checkpoints.py):
# one step at learning rate 0 leaves the weights as loaded, so the saved model must reproduce the reference
# outputs, and the folder it writes is complete (preprocessor_config.json included); the checkpoint's tokenizer is
# tokenizer.json alone (no merges.txt). A tokenizer larger than the embedding table, or a malformed
# preprocessor_config.json, is refused before anything is written; another image mean is used and written back.
# usage: train_from_hub_test.sh BRIDGETUNE TEST_MODEL FIXTURE_DIR WORK_DIR   (HF_HUB_CACHE set by ctest)
set -eu
bt=$1 test_model=$2 fixture=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$bt" synth --out "$work/data" --n 8 --images 4 --min_width 64 --max_width 96 >/dev/null
"$bt" train --model_name_or_path bt-test/tiny-bin --train_file "$work/data" --output_dir "$work/out" \
  --per_device_train_batch_size 4 --max_seq_length 32 --max_steps 1 --learning_rate 0 --dataloader_num_workers 0 --torch_threads 1 \
  --throughput_warmup_steps 0 --logging_steps 1 2>"$work/train.err" >/dev/null || { cat "$work/train.err"; exit 1; }
# the heads the contrastive model has no place for are named; HF's position_ids buffer is expected, not named
grep -q "skipped 3 checkpoint tensors" "$work/train.err" || { echo "no skipped-tensors line:"; cat "$work/train.err"; exit 1; }
! grep -q "position_ids" "$work/train.err" || { echo "position_ids named as skipped:"; cat "$work/train.err"; exit 1; }
for f in config.json model.safetensors preprocessor_config.json; do
  [ -f "$work/out/$f" ] || { echo "the trained folder lacks $f"; exit 1; }
done
"$bt" forward --model_name_or_path "$work/out" --batch "$fixture/inputs.safetensors" --out "$work/fwd.safetensors"
BT_FORWARD_OUT="$work/fwd.safetensors" "$test_model" --gtest_filter=CliOutput.*
if "$bt" train --model_name_or_path bt-test/tiny-bigvocab --train_file "$work/data" --output_dir "$work/out2" --max_seq_length 32 \
     --max_steps 1 2>"$work/vocab.err" >/dev/null; then
  echo "a tokenizer past the embedding table was accepted"; exit 1
fi
grep -q "1001 ids but the model's text embeddings hold 1000" "$work/vocab.err" || { cat "$work/vocab.err"; exit 1; }
[ ! -e "$work/out2" ] || { echo "out2 was written before the vocabulary check"; exit 1; }
# A preprocessor_config.json with another mean drives the transform (tests/eval/torch/evaluate_test.cpp checks the
# pixels) and the folder the run writes keeps it; a malformed one is a one-line error before anything is written.
cp -r "$HF_HUB_CACHE/models--bt-test--tiny-bin/snapshots/1234567890abcdef1234567890abcdef12345678" "$work/odd"
sed -i 's/0.48145466/0.5/' "$work/odd/preprocessor_config.json"
"$bt" train --model_name_or_path "$work/odd" --train_file "$work/data" --output_dir "$work/out3" --max_seq_length 32 \
  --per_device_train_batch_size 4 --max_steps 1 --dataloader_num_workers 0 --torch_threads 1 2>"$work/pp.err" >/dev/null \
  || { cat "$work/pp.err"; exit 1; }
tr -d ' \n' < "$work/out3/preprocessor_config.json" | grep -q '"image_mean":\[0.5,0.4578275,0.40821073\]' \
  || { echo "the written folder lost the trained mean:"; cat "$work/out3/preprocessor_config.json"; exit 1; }
sed -i 's/"image_std": \[/"image_std": [1, /' "$work/odd/preprocessor_config.json"
if "$bt" train --model_name_or_path "$work/odd" --train_file "$work/data" --output_dir "$work/out4" \
     --max_seq_length 32 --max_steps 1 2>"$work/pp4.err" >/dev/null; then
  echo "a 4-value image_std was accepted"; exit 1
fi
grep -q 'preprocessor_config.json: "image_std" must be a list of 3 numbers' "$work/pp4.err" || { cat "$work/pp4.err"; exit 1; }
[ "$(wc -l < "$work/pp4.err")" -eq 1 ] || { echo "not one line:"; cat "$work/pp4.err"; exit 1; }
[ ! -e "$work/out4" ] || { echo "out4 was written before the preprocessor check"; exit 1; }
echo "train from hub: ok"
