#!/usr/bin/env bash
# The one GPU check of issue 8, for the H200 machine (torch 2.x Python with CUDA, torchvision,
# transformers, nvcc; no network). Builds bridgetune's CUDA configuration against the Python torch's
# libtorch, runs the CUDA parity tests, the fused media kernel's throughput, the Python peer (HF
# BridgeTowerForContrastiveLearning + torch DataLoader/PIL, workers 0/1/2/8) and `bridgetune bench` once
# it exists, plus the loader with/without the GPU media path, writing every figure to files under $OUT.
# Ends within ~8 minutes (each step has a timeout,
# and a global deadline skips what no longer fits). Failing steps are logged and the rest still runs.
#
# Run (from the repository root):
#     OUT=/some/dir bash bench/gpu_check.sh          # OUT defaults to ./gpu_out
# With the device tool:  run(command="bash bench/gpu_check.sh", timeout_s=560)
# Results: $OUT/summary.txt (one line per step + headline figures), $OUT/*.json[l], $OUT/logs/*.log.
# Knobs: BT_GPU_CHECK_BUDGET_S (default 480), BT_GPU_JOBS (default nproc), BT_GPU_BUILD (build-gpu),
#        BT_GPU_SKIP_FULL=1 (only the CUDA-only build: a quick dry run on a machine without a CUDA libtorch).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu_out}
mkdir -p "$OUT/logs"
BUDGET=${BT_GPU_CHECK_BUDGET_S:-480}
JOBS=${BT_GPU_JOBS:-$(nproc)}
B=${BT_GPU_BUILD:-$ROOT/build-gpu}
DATA=${BT_GPU_DATA:-/tmp/bt_gpu_data}
T0=$(date +%s)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
export OPENBLAS_NUM_THREADS=1

note() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - T0))); }
# step NAME TIMEOUT CMD...: runs CMD with min(TIMEOUT, time left - 10 s); logs to $OUT/logs/NAME.log.
step() {
  local name=$1 t=$2
  shift 2
  local l=$(($(left) - 10))
  ((t > l)) && t=$l
  if ((t < 15)); then
    note "SKIP  $name (out of time budget)"
    return 99
  fi
  local s=$(date +%s)
  timeout -k 5 "$t" bash -c "$*" >"$OUT/logs/$name.log" 2>&1
  local rc=$?
  note "$( ((rc == 0)) && echo "OK   " || echo "FAIL ") $name rc=$rc $(($(date +%s) - s))s (limit ${t}s)"
  return $rc
}

note "bridgetune GPU check, $(date -u), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1
  nvidia-smi 2>&1 | grep -m1 "CUDA Version"  # the driver's CUDA level must cover nvcc's runtime
  nproc
  /usr/local/cuda/bin/nvcc --version 2>&1 | tail -1
  python3 -c "import torch, torchvision, transformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'torchvision', torchvision.__version__, 'transformers', transformers.__version__)" 2>&1
  ls /usr/lib/x86_64-linux-gnu/libnvjpeg* /usr/local/cuda/lib64/libnvjpeg* 2>/dev/null
  python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null
} >"$OUT/env.txt" 2>&1
head -3 "$OUT/env.txt" | sed 's/^/  /' | tee -a "$SUMMARY"

# nvJPEG ships with the pip torch (nvidia-nvjpeg-cu12) when no system copy exists: let dlopen find it.
NVJPEG_DIR=$(python3 - 2>/dev/null <<'PY'
import glob, os
try:
    import nvidia
    for base in nvidia.__path__:
        for p in glob.glob(os.path.join(base, "*", "lib", "libnvjpeg.so*")):
            print(os.path.dirname(p)); raise SystemExit
except ImportError:
    pass
PY
)
[ -n "$NVJPEG_DIR" ] && export LD_LIBRARY_PATH="$NVJPEG_DIR:${LD_LIBRARY_PATH:-}"

TORCH_PREFIX=$(python3 -c "import torch; print(torch.utils.cmake_prefix_path)" 2>/dev/null)
GEN=$(command -v ninja >/dev/null && echo "-G Ninja" || echo "")
export CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc}

# 1. Configure the full CUDA build with the Python torch's libtorch; build the CUDA targets first.
FULL=1
if [ "${BT_GPU_SKIP_FULL:-0}" != 1 ]; then
  step configure 90 "cmake -S '$ROOT' -B '$B' $GEN -DCMAKE_BUILD_TYPE=Release -DBT_CUDA=ON \
    -DCMAKE_PREFIX_PATH='$TORCH_PREFIX' -DCMAKE_CUDA_COMPILER=$CUDACXX"
  FULL=$?
fi
CUDA_B=$B
if ((FULL == 0)); then
  step build_cuda 150 "cmake --build '$B' -j $JOBS --target bt_cuda_gpu_tests bt_cuda_ref_tests bench_cuda_resize && \
    { cmake --build '$B' -j $JOBS --target bt_cuda_golden_tests bench_gpu_pipeline bench_loader_gpu || echo 'no bt_media targets'; }"
  FULL=$?
fi
if ((FULL != 0)); then
  # Fallback: only common/ media/ cuda/ (the rest of the tree may be mid-change or miss a dependency).
  ISO=/tmp/bt_cuda_only
  mkdir -p $ISO && ln -sfn "$ROOT/src" $ISO/src && ln -sfn "$ROOT/tests" $ISO/tests && ln -sfn "$ROOT/bench" $ISO/bench
  cat >$ISO/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.22)
project(bt_cuda_only LANGUAGES C CXX CUDA)
set(CMAKE_CXX_STANDARD 20)
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
find_package(GTest REQUIRED)
set(BT_HAVE_CUDA ON)
enable_testing()
include(GoogleTest)
add_subdirectory(src/common)
pkg_check_modules(SPNG IMPORTED_TARGET spng)
pkg_check_modules(HWY IMPORTED_TARGET libhwy)
if(SPNG_FOUND AND HWY_FOUND)
  add_subdirectory(src/media)
endif()
add_subdirectory(src/cuda)
add_subdirectory(tests/cuda)
add_subdirectory(bench/cuda)
CM
  CUDA_B=$ROOT/build-gpu-cuda-only
  step build_cuda_only 150 "cmake -S $ISO -B '$CUDA_B' $GEN -DCMAKE_BUILD_TYPE=Release && cmake --build '$CUDA_B' -j $JOBS"
  if (($? != 0)); then
    # Last resort: nvcc straight, no CMake/GTest (the benchmark checks bit-exactness itself).
    mkdir -p "$CUDA_B/bench/cuda"
    step build_nvcc 120 "$CUDACXX -O3 -std=c++20 -gencode arch=compute_90,code=sm_90 -I'$ROOT/src' \
      '$ROOT'/src/cuda/batch_resize.cu '$ROOT'/src/cuda/resize_plan.cpp '$ROOT'/src/cuda/resize_ref.cpp \
      '$ROOT'/src/media/resample_coeffs.cpp '$ROOT'/bench/cuda/bench_cuda_resize.cpp -o '$CUDA_B/bench/cuda/bench_cuda_resize'"
  fi
fi

# 1b. bridgetune itself + the GPU media pipeline's parity test (the rest of the tree may fail: then the CUDA
#     steps still run and `bridgetune bench` is skipped).
HAVE_BT=0
BT=$B/bridgetune
if ((FULL == 0)); then
  step build_bt 200 "cmake --build '$B' -j $JOBS --target bridgetune bt_gpu_media_tests bt_cuda_loader_tests" && HAVE_BT=1
fi

# 2. Parity tests (GPU vs CPU reference, nvJPEG, GpuMediaPipeline vs the CPU reference, decode-only loader)
#    and the CPU reference tests.
if [ -x "$CUDA_B/tests/cuda/bt_cuda_gpu_tests" ]; then
  step parity_tests 90 "ctest --test-dir '$CUDA_B' -R '^cuda_' --output-on-failure --output-junit '$OUT/cuda_tests.xml'"
  grep -E "tests passed|Skipped|Failed" "$OUT/logs/parity_tests.log" | head -20 | sed 's/^/  /' | tee -a "$SUMMARY"
fi

# 3. Kernel throughput: batch 48, 294^2 from ~740x700 inputs (train crops bf16, eval fp32).
BENCH=$CUDA_B/bench/cuda/bench_cuda_resize
if [ -x "$BENCH" ]; then
  # Each line also says whether the GPU output equalled the CPU reference bit for bit (exit 1 if not).
  step kernel_bench 60 "rc=0; for a in '--batch 48 --iters 200 --type bf16 --mode train' \
    '--batch 48 --iters 200 --type fp32 --mode eval' '--batch 256 --iters 50 --type bf16 --mode train'; do \
    '$BENCH' --size 294 \$a >>'$OUT/kernel_bench.jsonl' || rc=1; done; exit \$rc"
  sed 's/^/  /' "$OUT/kernel_bench.jsonl" | tee -a "$SUMMARY"
fi

# 5. Data: ~740x700 JPEG line drawings (Pillow).
if [ ! -f "$DATA/captions.jsonl" ]; then
  step data 90 "python3 '$ROOT/bench/gpu/make_images.py' --out '$DATA' --n 1200 --images 300"
fi

# 5b. Loader throughput with and without the GPU media path (RAM-resident JPEGs, batch 48, 294^2).
PIPE=$CUDA_B/bench/cuda/bench_gpu_pipeline
if [ -x "$PIPE" ] && [ -f "$DATA/captions.jsonl" ]; then
  step pipeline_bench 90 "'$PIPE' --data '$DATA' --threads 1,2,8,16 --batches 20 --mode train >'$OUT/pipeline_bench.jsonl' && \
    '$PIPE' --data '$DATA' --threads 1,8,16 --batches 20 --mode eval >>'$OUT/pipeline_bench.jsonl'"
  sed 's/^/  /' "$OUT/pipeline_bench.jsonl" | tee -a "$SUMMARY"
fi
# 5c. The same through the real bt::loader::Loader: normal CPU batches vs decode-only (+ BatchResize on the GPU),
#     images read from $DATA (page cache), workers 0/1/2/8.
LGPU=$CUDA_B/bench/cuda/bench_loader_gpu
if [ -x "$LGPU" ] && [ -f "$DATA/captions.jsonl" ]; then
  step loader_gpu_bench 90 "'$LGPU' --data '$DATA' --workers 0,1,2,8 --batches 15 --mode train >'$OUT/loader_gpu_bench.jsonl'"
  sed 's/^/  /' "$OUT/loader_gpu_bench.jsonl" | tee -a "$SUMMARY"
fi

# 6. bridgetune's training throughput: large preset, batch 48, bf16 on one GPU, workers 0/1/2/8 x
#    --use_media_pipeline off/on (+ in-memory batches, the model's bound), one repetition each to fit the budget.
#    Figures: $OUT/bt_bench/bench_results.json (+ bench.png), the table in logs/bt_bench.log.
if ((HAVE_BT)); then
  step bt_bench 200 "'$BT' bench --device cuda --model_preset large --per_device_train_batch_size 48 --bf16 \
    --workers 0,1,2,8 --use_media_pipeline --data '$DATA' --max_steps 15 --throughput_warmup_steps 4 --repeats 1 \
    --output_dir '$OUT/bt_bench'"
  grep -E "^\|" "$OUT/logs/bt_bench.log" | sed 's/^/  /' | tee -a "$SUMMARY"
  [ -f "$OUT/bt_bench/bench_results.json" ] && cp "$OUT/bt_bench/bench_results.json" "$OUT/bt_bench.json"
else
  note "SKIP  bridgetune bench (bridgetune did not build)"
fi

# 7. The Python peer: HF BridgeTowerForContrastiveLearning, large, batch 48, bf16, workers 0/1/2/8.
step python_peer 200 "python3 '$ROOT/bench/gpu/peer_train.py' --data '$DATA' --workers 0 1 2 8 --batch 48 \
  --warmup 3 --steps 8 --out '$OUT/peer_train.jsonl'"
[ -f "$OUT/peer_train.jsonl" ] && python3 -c "
import json,sys
for l in open('$OUT/peer_train.jsonl'):
    r=json.loads(l); print('  peer', r['loader'], 'workers', r['workers'], 'samples/s', r['samples_per_s'], 'step_ms', r['step_ms'])
" | tee -a "$SUMMARY"

note "done in $(($(date +%s) - T0))s; figures in $OUT"
