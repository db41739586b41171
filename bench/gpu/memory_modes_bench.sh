#!/usr/bin/env bash
# The memory modes of issue 27 on the device: the same training run plain, with --gradient_checkpointing, and as
# exact contrastive accumulation (2 micro-batches of half the batch): samples/s from train_results.json, the
# device's peak memory in use (nvidia-smi polled every 0.1 s; CPU runs: the process's peak RSS), the first
# logged loss (exact accumulation must log the full batch's). Called by bench/gpu/gpu_check.sh (step memory_modes).
# Usage: memory_modes_bench.sh BRIDGETUNE DATA OUT_DIR DEVICE PRESET BATCH STEPS [extra train flags...]
# OUT_DIR gets the logs only: the runs' output folders (a final model each: 3.5 GB for the large preset) live in a
# scratch folder removed after each run, so the GPU check's results archive stays small (the first device run of
# this script packed four large models and ran out of time).
set -u
BT=$1 DATA=$2 OUT=$3 DEV=$4 PRESET=$5 BATCH=$6 STEPS=$7
shift 7
mkdir -p "$OUT"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
poll_peak() {  # peak MiB in use on GPU 0 while PID lives
  local pid=$1 peak=0 v
  while kill -0 "$pid" 2>/dev/null; do
    v=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1)
    [[ "$v" =~ ^[0-9]+$ ]] && ((v > peak)) && peak=$v
    sleep 0.1
  done
  echo "$peak"
}
run_mode() {
  local name=$1
  shift
  local dir=$SCRATCH/$name
  rm -rf "$dir"
  /usr/bin/time -f "%M" -o "$OUT/$name.rss" "$BT" train --train_file "$DATA" --model_preset "$PRESET" --device "$DEV" \
    --max_steps "$STEPS" --throughput_warmup_steps 4 --logging_steps 1 --eval_steps 0 --save_steps 0 \
    --dataloader_num_workers 8 --output_dir "$dir" "$@" >"$OUT/$name.log" 2>&1 &
  local pid=$! peak=-1
  [ "$DEV" = cuda ] && peak=$(poll_peak "$pid")
  wait "$pid"
  local rc=$?
  local sps loss
  sps=$(python3 -c "import json;print(round(json.load(open('$dir/train_results.json'))['train_samples_per_second'],1))" 2>/dev/null)
  loss=$(python3 -c "import json;print(round(json.loads(open('$dir/metrics.jsonl').readline())['loss'],4))" 2>/dev/null)
  echo "memory_modes $name: rc=$rc samples/s=${sps:-?} first_loss=${loss:-?} peak_gpu_MiB=$peak peak_rss_KB=$(tail -1 "$OUT/$name.rss" 2>/dev/null)"
  rm -rf "$dir"
}
run_mode plain --per_device_train_batch_size "$BATCH" "$@"
run_mode checkpointing --per_device_train_batch_size "$BATCH" --gradient_checkpointing "$@"
run_mode exact_accum_2 --per_device_train_batch_size $((BATCH / 2)) --gradient_accumulation_steps 2 "$@"
run_mode plain_again --per_device_train_batch_size "$BATCH" "$@"
