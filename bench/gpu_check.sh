#!/usr/bin/env bash
# The one GPU check of issue 8, for the H200 machine (torch 2.x Python with CUDA, torchvision, transformers,
# nvcc; no network). Builds bridgetune's CUDA configuration against the Python torch's libtorch, runs the CUDA
# parity tests and the fused media kernel's throughput, `bridgetune bench` (large, batch 48, bf16, workers
# 0/1/2/8 x media pipeline off/on), the Python peer (HF BridgeTowerForContrastiveLearning + torch
# DataLoader/PIL, the same grid), then the loader with/without the GPU media path. Every step has a timeout
# and a global deadline (BT_GPU_CHECK_BUDGET_S, default 570 s) skips what no longer fits; a failing step is
# logged and the rest still runs.
#
# The GPU machine has no network and no package manager, and none of bridgetune's Debian build dependencies
# (libturbojpeg, libspng, libarchive, highway, GTest, CLI11, nlohmann_json, benchmark, pkg-config, ...):
# they travel as .deb files in .gpu_deps/ and bench/gpu/setup_deps.sh unpacks them to /tmp/btdeps (step 0).
# Two steps:
#     bash scripts/gpu/fetch_deps.sh        # here, on Debian 12 with apt: fills .gpu_deps/ (~17 MiB, git-ignored)
#     run(carry=[".gpu_deps"], command="bash bench/gpu_check.sh", timeout_s=600)   # the device tool, there
# Without .gpu_deps (a machine with the -dev packages installed) step 0 does nothing.
# By hand (from the repository root):
#     OUT=/some/dir bash bench/gpu_check.sh          # OUT defaults to ./gpu_out
# Results in $OUT: summary.txt (one line per step + headline figures), results.tgz (every log, JSON and plot;
# refreshed after each step), bt_bench.json, peer_train.jsonl.
# Knobs: BT_GPU_CHECK_BUDGET_S (570), BT_GPU_JOBS (nproc), BT_GPU_BUILD (build-gpu), BT_GPU_DATA,
#        BT_GPU_RESULTS (/tmp/bt_gpu_results), BT_DEPS_PREFIX (where the .deb bundle goes, /tmp/btdeps),
#        BT_GPU_STEPS (only these measuring steps, e.g. "bt_bench python_peer"),
#        BT_GPU_SKIP_FULL=1 (no torch configure: the CUDA kernels + loader only, a dry run without a CUDA libtorch).
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu_out}
# The device tool returns at most 8 files from $OUT: everything is written under $R and packed into
# $OUT/results.tgz after every step (so a run cut off at its limit still returns what it measured), next to
# $OUT/summary.txt.
R=${BT_GPU_RESULTS:-/tmp/bt_gpu_results}
rm -rf "$R"
mkdir -p "$OUT" "$R/logs"
BUDGET=${BT_GPU_CHECK_BUDGET_S:-570}
JOBS=${BT_GPU_JOBS:-$(nproc)}
B=${BT_GPU_BUILD:-$ROOT/build-gpu}
DATA=${BT_GPU_DATA:-/tmp/bt_gpu_data}
T0=$(date +%s)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
export OPENBLAS_NUM_THREADS=1

note() { echo "$*" | tee -a "$SUMMARY"; }
pack() { cp "$SUMMARY" "$R/" && tar -czf "$OUT/results.tgz.part" -C "$R" . && mv "$OUT/results.tgz.part" "$OUT/results.tgz"; }
left() { echo $((BUDGET - ($(date +%s) - T0))); }
# BT_GPU_STEPS="bt_bench python_peer" runs only those measuring steps (the builds always run; on a machine still
# warm from an earlier call they are no-ops): for a second call that finishes what the first did not reach.
want() { [ -z "${BT_GPU_STEPS:-}" ] || [[ " $BT_GPU_STEPS " == *" $1 "* ]]; }
# step NAME TIMEOUT CMD...: runs CMD with min(TIMEOUT, time left - 10 s); logs to $R/logs/NAME.log.
step() {
  local name=$1 t=$2
  shift 2
  local l=$(($(left) - 10))
  ((t > l)) && t=$l
  if ((t < 15)); then
    note "SKIP  $name (out of time budget)"
    return 99
  fi
  local s
  s=$(date +%s)
  timeout -k 5 "$t" bash -c "$*" >"$R/logs/$name.log" 2>&1
  local rc=$?
  note "$( ((rc == 0)) && echo "OK   " || echo "FAIL ") $name rc=$rc $(($(date +%s) - s))s (limit ${t}s)"
  pack
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
} >"$R/env.txt" 2>&1
head -3 "$R/env.txt" | sed 's/^/  /' | tee -a "$SUMMARY"

# nvJPEG: the CUDA toolkit's copy when the loader does not already see one, else the pip wheels' (nvidia-nvjpeg-*,
# laid out nvidia/<pkg>/lib or nvidia/cu13/lib): let dlopen find it. The decoder falls back to the CPU without it.
NVJPEG_DIR=""
if ! ldconfig -p 2>/dev/null | grep -q libnvjpeg; then
  NVJPEG_DIR=$(ls -d /usr/local/cuda/lib64/libnvjpeg.so* /usr/local/cuda/targets/x86_64-linux/lib/libnvjpeg.so* \
    2>/dev/null | head -1 | xargs -r dirname)
  [ -z "$NVJPEG_DIR" ] && NVJPEG_DIR=$(python3 - 2>/dev/null <<'PY'
import glob, os
try:
    import nvidia
    for base in nvidia.__path__:
        for p in sorted(glob.glob(os.path.join(base, "**", "libnvjpeg.so*"), recursive=True)):
            print(os.path.dirname(p)); raise SystemExit
except ImportError:
    pass
PY
)
fi
[ -n "$NVJPEG_DIR" ] && export LD_LIBRARY_PATH="$NVJPEG_DIR:${LD_LIBRARY_PATH:-}"
echo "nvjpeg: ${NVJPEG_DIR:-ld.so cache or absent}" >>"$R/env.txt"

TORCH_PREFIX=$(python3 -c "import torch; print(torch.utils.cmake_prefix_path)" 2>/dev/null)
GEN=$(command -v ninja >/dev/null && echo "-G Ninja" || echo "")
export CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc}

# 0. Build dependencies from the carried .deb bundle (.gpu_deps, see the header): unpacked to $BT_DEPS_PREFIX,
#    which pkg-config (bundled pkgconf), CMake (CMAKE_PREFIX_PATH) and the loader then search first. Sourced,
#    so its PKG_CONFIG / PKG_CONFIG_PATH / CMAKE_PREFIX_PATH / LD_LIBRARY_PATH / PATH hold for every later step.
# shellcheck source=/dev/null
. "$ROOT/bench/gpu/setup_deps.sh" "${BT_DEPS_PREFIX:-/tmp/btdeps}" >"$R/logs/setup_deps.log" 2>&1
DEPS_RC=$?
note "$( ((DEPS_RC == 0)) && echo "OK   " || echo "FAIL ") $(tail -1 "$R/logs/setup_deps.log")"
# Every configure below gets the same search path: the Python torch's CMake configs, then the bundle.
CMAKE_PREFIX=$TORCH_PREFIX
[ -n "${BT_DEPS_USR:-}" ] && CMAKE_PREFIX="${CMAKE_PREFIX:+$CMAKE_PREFIX;}$BT_DEPS_USR"
DEPS_ARGS="-DCMAKE_PREFIX_PATH='$CMAKE_PREFIX'"
[ -n "${BT_DEPS_PKG_CONFIG:-}" ] && DEPS_ARGS="$DEPS_ARGS -DPKG_CONFIG_EXECUTABLE='$BT_DEPS_PKG_CONFIG'"

# 1. Configure the full CUDA build with the Python torch's libtorch; build the CUDA targets first.
FULL=1
if [ "${BT_GPU_SKIP_FULL:-0}" != 1 ]; then
  step configure 90 "cmake -S '$ROOT' -B '$B' $GEN -DCMAKE_BUILD_TYPE=Release -DBT_CUDA=ON \
    $DEPS_ARGS -DCMAKE_CUDA_COMPILER=$CUDACXX"
  FULL=$?
fi
CUDA_B=$B
if ((FULL == 0)); then
  step build_cuda 150 "cmake --build '$B' -j $JOBS --target bt_cuda_gpu_tests bt_cuda_ref_tests bench_cuda_resize && \
    { cmake --build '$B' -j $JOBS --target bt_cuda_golden_tests bench_gpu_pipeline bench_loader_gpu || echo 'no bt_media targets'; }"
  FULL=$?
fi
CUDA_OK=$FULL
if ((CUDA_OK != 0)); then
  # Fallback 1: the whole tree without libtorch (the torch configure is what usually fails): kernels, loader,
  # parity tests and every CUDA benchmark but `bridgetune bench`.
  CUDA_B=$ROOT/build-gpu-notorch
  step build_cuda_notorch 200 "cmake -S '$ROOT' -B '$CUDA_B' $GEN -DCMAKE_BUILD_TYPE=Release -DBT_WITH_TORCH=OFF \
    -DBT_CUDA=ON $DEPS_ARGS -DCMAKE_CUDA_COMPILER=$CUDACXX && cmake --build '$CUDA_B' -j $JOBS --target \
    bt_cuda_gpu_tests bt_cuda_ref_tests bt_cuda_golden_tests bt_cuda_loader_tests bench_cuda_resize \
    bench_gpu_pipeline bench_loader_gpu"
  CUDA_OK=$?
fi
if ((CUDA_OK != 0)); then
  # Fallback 2: only common/ media/ cuda/ (the rest of the tree may be mid-change or miss a dependency), with the
  # same dependency bundle ($DEPS_ARGS + step 0's environment).
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
  step build_cuda_only 150 "cmake -S $ISO -B '$CUDA_B' $GEN -DCMAKE_BUILD_TYPE=Release $DEPS_ARGS \
    -DCMAKE_CUDA_COMPILER=$CUDACXX && cmake --build '$CUDA_B' -j $JOBS"
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
  step build_bt 240 "cmake --build '$B' -j $JOBS --target bridgetune bt_gpu_media_tests bt_cuda_loader_tests" && HAVE_BT=1
fi

# 2. Parity tests (GPU vs CPU reference, nvJPEG, GpuMediaPipeline vs the CPU reference, decode-only loader)
#    and the CPU reference tests.
if [ -x "$CUDA_B/tests/cuda/bt_cuda_gpu_tests" ] && want parity_tests; then
  step parity_tests 90 "ctest --test-dir '$CUDA_B' -R '^cuda_' --output-on-failure --output-junit '$R/cuda_tests.xml'"
  grep -E "tests passed|Skipped|Failed|\*\*\*" "$R/logs/parity_tests.log" | head -20 | sed 's/^/  /' | tee -a "$SUMMARY"
fi

# 3. Kernel throughput: batch 48, 294^2 from ~740x700 inputs (train crops bf16, eval fp32).
BENCH=$CUDA_B/bench/cuda/bench_cuda_resize
if [ -x "$BENCH" ] && want kernel_bench; then
  # Each line also says whether the GPU output equalled the CPU reference bit for bit (exit 1 if not).
  step kernel_bench 60 "rc=0; for a in '--batch 48 --iters 200 --type bf16 --mode train' \
    '--batch 48 --iters 200 --type fp32 --mode eval' '--batch 256 --iters 50 --type bf16 --mode train'; do \
    '$BENCH' --size 294 \$a >>'$R/kernel_bench.jsonl' || rc=1; done; exit \$rc"
  sed 's/^/  /' "$R/kernel_bench.jsonl" | tee -a "$SUMMARY"
fi

# 4. Data: ~740x700 JPEG line drawings (Pillow), and one tokenizer for both sides: the peer's RoBERTa-style
#    vocabulary (GPT-2's BPE + <s> <pad> </s> <unk> <mask>, 50262 ids) also sizes bridgetune's embeddings.
if [ ! -f "$DATA/captions.jsonl" ]; then
  step data 60 "python3 '$ROOT/bench/gpu/make_images.py' --out '$DATA' --n 1200 --images 300"
fi
TOK=$R/tokenizer
step tokenizer 30 "python3 '$ROOT/bench/gpu/peer_train.py' --write_tokenizer '$TOK'"
TOK_ARG=""
[ -f "$TOK/vocab.json" ] && TOK_ARG="--tokenizer_name '$TOK'"

# 5. bridgetune's training throughput: large preset, batch 48, bf16 on one GPU, workers 0/1/2/8 x
#    --use_media_pipeline off/on (+ in-memory batches, the model's bound), one repetition each to fit the budget.
#    Figures: bt_bench/bench_results.json (+ bench.png) in results.tgz, the table in logs/bt_bench.log.
if ((HAVE_BT)) && want bt_bench; then
  step bt_bench 200 "'$BT' bench --device cuda --model_preset large --per_device_train_batch_size 48 --bf16 \
    --workers 0,1,2,8 --use_media_pipeline --data '$DATA' --max_steps 15 --throughput_warmup_steps 4 --repeats 1 \
    $TOK_ARG --output_dir '$R/bt_bench'"
  grep -E "^\||samples/s|error" "$R/logs/bt_bench.log" | sed 's/^/  /' | tee -a "$SUMMARY"
  [ -f "$R/bt_bench/bench_results.json" ] && cp "$R/bt_bench/bench_results.json" "$OUT/bt_bench.json"
elif ((!HAVE_BT)); then
  note "SKIP  bridgetune bench (bridgetune did not build)"
fi

# 6. The Python peer: HF BridgeTowerForContrastiveLearning, large, batch 48, bf16, workers 0/1/2/8, the same
#    4 warm-up + 11 timed steps as bridgetune's 15; its own budget ends it inside the step's limit.
if want python_peer; then
  PEER_BUDGET=$(($(left) - 25))
  ((PEER_BUDGET > 170)) && PEER_BUDGET=170
  step python_peer 200 "python3 '$ROOT/bench/gpu/peer_train.py' --data '$DATA' --workers 0 1 2 8 --batch 48 \
    --warmup 4 --steps 11 --budget_s $PEER_BUDGET --out '$R/peer_train.jsonl'"
  [ -f "$R/peer_train.jsonl" ] && cp "$R/peer_train.jsonl" "$OUT/peer_train.jsonl" && python3 -c "
import json
for l in open('$R/peer_train.jsonl'):
    r = json.loads(l)
    print('  peer', r.get('loader'), 'workers', r.get('workers'), 'samples/s', r.get('samples_per_s'),
          'step_ms', r.get('step_ms'), r.get('error') or r.get('skipped') or '')
" | tee -a "$SUMMARY"
fi

# 7. Loader throughput with and without the GPU media path (RAM-resident JPEGs, batch 48, 294^2), then the
#    same through the real bt::loader::Loader: normal CPU batches vs decode-only (+ BatchResize on the GPU).
PIPE=$CUDA_B/bench/cuda/bench_gpu_pipeline
if [ -x "$PIPE" ] && [ -f "$DATA/captions.jsonl" ] && want pipeline_bench; then
  step pipeline_bench 60 "'$PIPE' --data '$DATA' --threads 1,2,8,16 --batches 20 --mode train >'$R/pipeline_bench.jsonl' && \
    '$PIPE' --data '$DATA' --threads 1,8,16 --batches 20 --mode eval >>'$R/pipeline_bench.jsonl'"
  sed 's/^/  /' "$R/pipeline_bench.jsonl" | tee -a "$SUMMARY"
fi
LGPU=$CUDA_B/bench/cuda/bench_loader_gpu
if [ -x "$LGPU" ] && [ -f "$DATA/captions.jsonl" ] && want loader_gpu_bench; then
  step loader_gpu_bench 60 "'$LGPU' --data '$DATA' --workers 0,1,2,8 --batches 15 --mode train >'$R/loader_gpu_bench.jsonl'"
  sed 's/^/  /' "$R/loader_gpu_bench.jsonl" | tee -a "$SUMMARY"
fi

note "done in $(($(date +%s) - T0))s; figures in $OUT (summary.txt, results.tgz, bt_bench.json, peer_train.jsonl)"
pack
