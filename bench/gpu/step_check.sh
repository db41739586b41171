#!/usr/bin/env bash
# Issue 46's one prepared GPU run (H200, ~9 min of wall time): build bridgetune, then the step's figures, every row
# interleaved over the repeats (medians), each under its own timeout and a global deadline that skips what no
# longer fits. Order: the headline rows first, then what was never measured, then the other repeats:
#   repeat 1   bridgetune bench (in-memory, workers 8, workers 8 + nvJPEG media pipeline) and the HF peer at the
#              same settings (bench/gpu/train_peer.py: model_only + workers 8)
#   memory     plain / --gradient_checkpointing / exact accumulation (2 x half batch), large preset (train runs)
#   precision  --bf16 vs --fp16 (loss scaling), STEPS_PREC steps each, --dropout 0, the loss per step
#   repeats    2..N of repeat 1's rows
#   nice 0     the bench rows once more with --loader_worker_nice 0 (the workers' default on CUDA is nice 5)
#   profile    one in-memory run under --profile_steps (Kineto: ops and kernels), the trace gzipped to $OUT
# Prints one table (samples/s, step ms, TFLOP/s, MFU, peak GB, attention backends) and writes it to
# $OUT/step_check.json and $OUT/step_check.md (bench/gpu/step_summary.py); logs in $OUT/step_check_logs.tgz.
#
# On the device (after `bash bench/gpu/fetch_deps.sh` here):
#     run(carry=[".gpu_deps"], command="bash bench/gpu/step_check.sh", timeout_s=600, kind="nvidia-h200")
# Dry run here (CPU, tiny preset, a few steps, the existing build; GPU-only rows are skipped by bench itself):
#     bash bench/gpu/step_check.sh --dry-run          (or BT_STEP_DRYRUN=1)
# Knobs: BT_STEP_BUDGET_S (540), BT_STEP_REPEATS (3), BT_GPU_BUILD (build-gpu; dry run: build), BT_GPU_JOBS,
#        BT_GPU_DATA, BT_STEP_RESULTS (/tmp/bt_step_results), BT_DEPS_PREFIX (/tmp/btdeps), BT_PYTHON (python3).
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
DRY=${BT_STEP_DRYRUN:-0}
[ "${1:-}" = --dry-run ] && DRY=1
OUT=${OUT:-$ROOT/gpu_out}
R=${BT_STEP_RESULTS:-/tmp/bt_step_results}
rm -rf "$R"
mkdir -p "$OUT" "$R/logs"
BUDGET=${BT_STEP_BUDGET_S:-540}
REPEATS=${BT_STEP_REPEATS:-3}
JOBS=${BT_GPU_JOBS:-$(nproc)}
T0=$(date +%s)
export OPENBLAS_NUM_THREADS=1 TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} PYTHONUNBUFFERED=1
if [ "$DRY" = 1 ]; then
  B=${BT_GPU_BUILD:-$ROOT/build} DATA=${BT_GPU_DATA:-$R/data}
  DEV=cpu PRESET=tiny BATCH=4 STEPS=4 WARMUP=1 STEPS_PREC=4 NIMG=32 NDISTINCT=8 WORKERS=2
  PEER_ARGS=(--device cpu --preset tiny)
else
  B=${BT_GPU_BUILD:-$ROOT/build-gpu} DATA=${BT_GPU_DATA:-/tmp/bt_gpu_data}
  DEV=cuda PRESET=large BATCH=48 STEPS=16 WARMUP=4 STEPS_PREC=30 NIMG=1200 NDISTINCT=300 WORKERS=8
  PEER_ARGS=(--device cuda --preset large)
fi
BT=$B/bridgetune
PY=${BT_PYTHON:-python3}  # the device's python3 holds torch; here BT_PYTHON names one that does
SUMMARY=$R/progress.txt

note() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - T0))); }
# step NAME TIMEOUT CMD...: CMD (argv) under min(TIMEOUT, time left - 10 s); skipped under 15 s. Log: logs/NAME.log.
step() {
  local name=$1 t=$2 l
  shift 2
  l=$(($(left) - 10))
  ((t > l)) && t=$l
  if ((t < 15)); then
    note "SKIP  $name (out of time)"
    return 99
  fi
  local s rc
  s=$(date +%s)
  timeout -k 5 "$t" "$@" >"$R/logs/$name.log" 2>&1
  rc=$?
  note "$( ((rc == 0)) && echo "OK   " || echo "FAIL ") $name rc=$rc $(($(date +%s) - s))s (limit ${t}s)"
  return $rc
}
summarize() {
  "$PY" "$ROOT/bench/gpu/step_summary.py" "$R" "$OUT" "$BATCH" 2>&1 | tee -a "$SUMMARY"
  tar -czf "$OUT/step_check_logs.tgz" -C "$R" logs progress.txt 2>/dev/null
}

note "bridgetune step check$([ "$DRY" = 1 ] && echo ' (DRY RUN: CPU, tiny preset)'), $(date -u), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
note "  gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)"
note "  torch: $("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1 | tail -1)"

# ---- build (the GPU machine: the carried .deb bundle, the Python torch's libtorch; a dry run uses its build)
if [ "$DRY" != 1 ] || [ ! -x "$BT" ]; then
  # shellcheck source=/dev/null
  . "$ROOT/bench/gpu/setup_deps.sh" "${BT_DEPS_PREFIX:-/tmp/btdeps}" >"$R/logs/setup_deps.log" 2>&1
  TORCH_PREFIX=$("$PY" -c "import torch; print(torch.utils.cmake_prefix_path)" 2>>"$R/logs/setup_deps.log")
  NVCC=$(command -v nvcc || ls -d /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -V | tail -1)
  CM=(-DCMAKE_BUILD_TYPE=Release -DBT_CUDA=AUTO -DBT_DIST_NCCL=OFF "-DCMAKE_PREFIX_PATH=$TORCH_PREFIX${BT_DEPS_USR:+;$BT_DEPS_USR}")
  [ -n "${BT_DEPS_PKG_CONFIG:-}" ] && CM+=("-DPKG_CONFIG_EXECUTABLE=$BT_DEPS_PKG_CONFIG")
  [ -n "$NVCC" ] && CM+=("-DCMAKE_CUDA_COMPILER=$NVCC")
  command -v ninja >/dev/null && CM+=(-G Ninja)
  step configure 150 cmake -S "$ROOT" -B "$B" "${CM[@]}" &&
    step build 330 cmake --build "$B" -j "$JOBS" --target bridgetune
fi
if ! "$BT" --help >/dev/null 2>&1; then
  note "FAIL  no bridgetune at $BT: see logs/configure.log, logs/build.log"
  summarize
  exit 1
fi

# nvJPEG for --media_decode gpu (dlopened): the toolkit's or the pip wheels' copy when ld.so does not see one, linked
# alone into a private folder (the toolkit's whole lib64 would shadow torch's cuBLAS), as bench/gpu/gpu_check.sh does.
if [ "$DEV" = cuda ] && ! ldconfig -p 2>/dev/null | grep -q libnvjpeg; then
  NVJ=$(ls -d /usr/local/cuda/lib64/libnvjpeg.so* /usr/local/cuda/targets/x86_64-linux/lib/libnvjpeg.so* 2>/dev/null | head -1)
  [ -z "$NVJ" ] && NVJ=$("$PY" -c "import glob, nvidia; print(next(iter(sorted(p for b in nvidia.__path__ for p in glob.glob(b + '/**/libnvjpeg.so*', recursive=True))), ''))" 2>/dev/null)
  if [ -n "$NVJ" ]; then
    mkdir -p "$R/nvjpeg_lib" && ln -sf "$(dirname "$NVJ")"/libnvjpeg.so* "$R/nvjpeg_lib/"
    export LD_LIBRARY_PATH="$R/nvjpeg_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  note "  nvjpeg: ${NVJ:-not found (the media pipeline row decodes on the CPU or fails)}"
fi

# ---- data + the one vocabulary both sides read
[ -f "$DATA/captions.jsonl" ] ||
  step data 60 "$PY" "$ROOT/bench/gpu/make_images.py" --out "$DATA" --n "$NIMG" --images "$NDISTINCT"
TOK=$R/tokenizer
step tokenizer 30 "$PY" "$ROOT/bench/gpu/train_peer.py" --write_tokenizer "$TOK"
TOK_ARGS=()
[ -f "$TOK/vocab.json" ] && TOK_ARGS=(--tokenizer_name "$TOK")

# ---- the rows
MEDIA=()
[ "$DEV" = cuda ] && MEDIA=(--use_media_pipeline --media_decode gpu)
bt_bench() {  # NAME [flags...]: one interleaved repeat of the bench rows (NAME = its index, or a variant)
  local name=$1
  shift
  step "bench_$name" 150 "$BT" bench --device "$DEV" --model_preset "$PRESET" --per_device_train_batch_size "$BATCH" --bf16 \
    --workers "$WORKERS" "${MEDIA[@]}" --data "$DATA" --max_steps "$STEPS" --throughput_warmup_steps "$WARMUP" \
    --repeats 1 "${TOK_ARGS[@]}" --jpeg_dct_scaling false --output_dir "$R/bench_$name" "$@"
  rm -rf "$R/bench_$name/runs"
}
peer() {  # repeat index
  local pb=$(($(left) - 30))
  ((pb > 100)) && pb=100
  step "peer_$1" $((pb + 20)) "$PY" "$ROOT/bench/gpu/train_peer.py" --data "$DATA" "${PEER_ARGS[@]}" \
    --workers "$WORKERS" --batch "$BATCH" --warmup "$WARMUP" --steps $((STEPS - WARMUP)) --budget_s "$pb" \
    --out "$R/peer_$1.jsonl"
}
train_run() {  # NAME STEPS [flags...]: train_results.json and metrics.jsonl kept, the model (GBs) removed
  local name=$1 steps=$2 dir=$R/train_$1
  shift 2
  step "$name" 150 "$BT" train --train_file "$DATA" --model_preset "$PRESET" --device "$DEV" "${TOK_ARGS[@]}" \
    --max_steps "$steps" --throughput_warmup_steps "$WARMUP" --logging_steps 1 --eval_steps 0 --save_steps 0 \
    --dataloader_num_workers "$WORKERS" --jpeg_dct_scaling false --output_dir "$dir" "$@"
  find "$dir" -maxdepth 1 \( -name '*.safetensors' -o -name 'checkpoint-*' \) -exec rm -rf {} + 2>/dev/null
}

bt_bench 1
peer 1
MEM_STEPS=$((WARMUP + 6))  # peak memory is reached by step 2; a few timed steps for samples/s
train_run mem_plain "$MEM_STEPS" --per_device_train_batch_size "$BATCH" --bf16
train_run mem_checkpointing "$MEM_STEPS" --per_device_train_batch_size "$BATCH" --bf16 --gradient_checkpointing
train_run mem_exact_accum_2 "$MEM_STEPS" --per_device_train_batch_size $((BATCH / 2)) --gradient_accumulation_steps 2 --bf16
train_run prec_bf16 "$STEPS_PREC" --per_device_train_batch_size "$BATCH" --bf16 --dropout 0
train_run prec_fp16 "$STEPS_PREC" --per_device_train_batch_size "$BATCH" --fp16 --dropout 0
for ((i = 2; i <= REPEATS; i++)); do
  bt_bench "$i"
  peer "$i"
done
# The decode workers' priority A/B: the default (nice 5 on CUDA) against none, same rows.
bt_bench nice_0 --loader_worker_nice 0
summarize >/dev/null  # what is measured so far, in case the profile run is cut off
# The profile: in-memory rows only (one configuration), two steps traced after the warm-up.
if step profile 90 "$BT" bench --device "$DEV" --model_preset "$PRESET" --per_device_train_batch_size "$BATCH" --bf16 \
  --workers 0 --data "$DATA" --max_steps $((WARMUP + 3)) --throughput_warmup_steps "$WARMUP" --repeats 1 \
  "${TOK_ARGS[@]}" --profile_steps $((WARMUP + 1)):$((WARMUP + 2)) --output_dir "$R/profile"; then
  TRACE=$(find "$R/profile/runs" -name 'profile_steps_*.json' | head -1)
  [ -n "$TRACE" ] && gzip -c "$TRACE" >"$OUT/step_profile.json.gz" && note "  trace: $OUT/step_profile.json.gz"
fi
rm -rf "$R/profile/runs/"*/*.safetensors
note "done in $(($(date +%s) - T0))s"
summarize
