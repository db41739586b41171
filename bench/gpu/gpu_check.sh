#!/usr/bin/env bash
# The one GPU check (issues 8 and 19), for the lent H200 machine (torch 2.x Python with CUDA, maybe torchvision
# and transformers, nvcc; no network, no package manager). The headline comes first and depends on nothing after
# it; every later step is a bonus. Order:
#   env     OS, glibc, g++, cmake, ninja, CUDA, GPU, torch/torchvision/transformers versions (summary.txt)
#   deps    unpack the carried .deb bundle (.gpu_deps/, see below): build libraries, pkg-config, cmake/ninja
#   data    ~740x700 JPEG line drawings + one RoBERTa-style tokenizer for both sides
#   peer    the Python peer (HF BridgeTowerForContrastiveLearning + torch DataLoader), in the background while
#           bridgetune configures and builds (the build runs under nice, so the peer's loader keeps its cores)
#   build   configure (CUDA libtorch of the Python torch) and build `--target bridgetune` alone
#   bench   `bridgetune bench` large, batch 48, bf16, in-memory bound + workers 0,1,8 x media pipeline off/on
#           (--media_decode cpu: the loader decodes, the GPU resizes); bench_results.json is rewritten after every
#           row and copied to $OUT/bt_bench.json
#   then    memory modes (plain / --gradient_checkpointing / exact accumulation; bench/gpu/memory_modes_bench.sh),
#           workers 8 with JPEG decode on the GPU (--media_decode gpu, nvJPEG), CUDA parity tests, kernel bench, worker count 2 (both sides), fused ops off (BRIDGETUNE_FUSED_OPS=0) vs on,
#           loader benches; when the torch build
#           failed: the torch-free CUDA builds (fallbacks) for the kernels and loader figures.
# Every step has a timeout; a global deadline (BT_GPU_CHECK_BUDGET_S, default 570 s) skips what no longer fits; a
# failing step is logged and the rest still runs. HAVE_BT comes from the bridgetune binary itself.
#
# Dependencies: bash bench/gpu/fetch_deps.sh (here, Debian 12 with apt) fills .gpu_deps/ (git-ignored); then
#     run(carry=[".gpu_deps"], command="bash bench/gpu/gpu_check.sh", timeout_s=600)   # the device tool
# Without .gpu_deps (a machine with the -dev packages installed) the deps step does nothing.
# Dry run here (no GPU): BT_GPU_DRYRUN=1 bash bench/gpu/gpu_check.sh runs every step on the CPU with the tiny preset,
# batch 4 and a few steps (GPU-only steps say SKIP), so a typo shows before the device's 15 minutes do.
# Results in $OUT (default ./gpu_out): summary.txt (one line per step + headline figures), results.tgz (every log,
# JSON and plot; refreshed after each step, so a run cut off at its limit still returns what it measured),
# bt_bench.json, peer_train.jsonl.
# Knobs: BT_GPU_CHECK_BUDGET_S (570), BT_GPU_JOBS (nproc), BT_GPU_BUILD (build-gpu), BT_GPU_DATA,
#        BT_GPU_RESULTS (/tmp/bt_gpu_results), BT_DEPS_PREFIX (/tmp/btdeps), BT_GPU_DRYRUN (0),
#        BT_GPU_STEPS (only these measuring steps, e.g. "bt_bench python_peer", for a second call),
#        BT_GPU_SKIP_FULL=1 (no torch configure: the CUDA kernels + loader only),
#        BT_GPU_PEER_WORKERS ("8 0 1"), BT_GPU_PEER_STEPS (STEPS - WARMUP), BT_GPU_PEER_AFTER_BUILD=1 (the peer runs
#        alone after the build instead of beside it), BT_GPU_TORCH_TESTS=1 (also build and run the libtorch tests'
#        CUDA cases: fused AdamW, QuickGELU kernel, media pipeline),
#        BT_GPU_PEER_BUDGET_S (the peer's own budget; default from the time left),
#        BT_GPU_ENV_ONLY=1 (stop after the environment checks; exit 1 when torch or the build libraries are missing).
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
DRY=${BT_GPU_DRYRUN:-0}
OUT=${OUT:-$ROOT/gpu_out}
R=${BT_GPU_RESULTS:-/tmp/bt_gpu_results}
rm -rf "$R"
mkdir -p "$OUT" "$R/logs"
BUDGET=${BT_GPU_CHECK_BUDGET_S:-570}
JOBS=${BT_GPU_JOBS:-$(nproc)}
T0=$(date +%s)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
export OPENBLAS_NUM_THREADS=1
# One GPU: the kernels for it only (torch's CMake reads this), and no NCCL process groups in bridgetune.
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}

# The measuring profile: the headline on the GPU, or a tiny CPU rehearsal of every step (dry run).
if [ "$DRY" = 1 ]; then
  B=${BT_GPU_BUILD:-$ROOT/build-gpu-dry}
  DATA=${BT_GPU_DATA:-/tmp/bt_gpu_dry_data}
  DEV=cpu PRESET=tiny BATCH=4 STEPS=3 WARMUP=1 BF16="" NIMG=32 NDISTINCT=8
  PEER_ARGS="--device cpu --preset tiny"
else
  B=${BT_GPU_BUILD:-$ROOT/build-gpu}
  DATA=${BT_GPU_DATA:-/tmp/bt_gpu_data}
  DEV=cuda PRESET=large BATCH=48 STEPS=36 WARMUP=6 BF16=--bf16 NIMG=1200 NDISTINCT=300  # 30 timed steps
  PEER_ARGS="--device cuda --preset large"
fi
HEAD_WORKERS=8,0,1  # the headline grid, 8 first (the row that matters most if time runs out); 2 follows later
BT=$B/bridgetune

note() { echo "$*" | tee -a "$SUMMARY"; }
pack() { cp "$SUMMARY" "$R/" && tar -czf "$OUT/results.tgz.part" -C "$R" . && mv "$OUT/results.tgz.part" "$OUT/results.tgz"; }
left() { echo $((BUDGET - ($(date +%s) - T0))); }
want() { [ -z "${BT_GPU_STEPS:-}" ] || [[ " $BT_GPU_STEPS " == *" $1 "* ]]; }
# limit T: min(T, time left - 10 s); empty when under 15 s remain.
limit() {
  local t=$1 l=$(($(left) - 10))
  ((t > l)) && t=$l
  ((t >= 15)) && echo "$t"
}
# step NAME TIMEOUT CMD...: runs CMD (a bash string) under the limit; logs to $R/logs/NAME.log.
step() {
  local name=$1 t
  t=$(limit "$2")
  shift 2
  if [ -z "$t" ]; then
    note "SKIP  $name (out of time budget)"
    return 99
  fi
  local s rc
  s=$(date +%s)
  timeout -k 5 "$t" bash -c "$*" >"$R/logs/$name.log" 2>&1
  rc=$?
  note "$( ((rc == 0)) && echo "OK   " || echo "FAIL ") $name rc=$rc $(($(date +%s) - s))s (limit ${t}s)"
  pack
  return $rc
}
ver() { "$@" 2>&1 | head -1; }

# ---- env: what this machine is (first, so even a run that dies at once says where it ran)
note "bridgetune GPU check$([ "$DRY" = 1 ] && echo ' (DRY RUN: CPU, tiny preset)'), $(date -u), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
{
  echo "os: $( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || uname -a)"
  echo "glibc: $(getconf GNU_LIBC_VERSION 2>/dev/null || ver ldd --version)"
  echo "g++: $(ver g++ --version)"
  echo "cmake: $(command -v cmake >/dev/null && ver cmake --version || echo none)"
  echo "ninja: $(command -v ninja >/dev/null && ver ninja --version || echo none)"
  echo "nvcc: $(/usr/local/cuda/bin/nvcc --version 2>&1 | tail -1)"
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
  echo "driver: $(nvidia-smi 2>&1 | grep -m1 -o 'CUDA Version: [0-9.]*')"
  echo "cpus: $(nproc), memory: $(free -g 2>/dev/null | awk '/Mem:/{print $2 " GiB"}')"
  echo "torch cxx11 abi: $(python3 -c 'import torch; print(torch.compiled_with_cxx11_abi())' 2>&1 | tail -1)"
  for m in torch torchvision transformers numpy PIL; do
    echo "python $m: $(python3 -c "import $m, sys; v = $m.__version__; c = getattr(getattr($m, 'version', None), 'cuda', None) if '$m' == 'torch' else None; print(v, ('cuda ' + str(c)) if c else '')" 2>&1 | tail -1)"
  done
} >"$R/env.txt" 2>&1
sed 's/^/  /' "$R/env.txt" | tee -a "$SUMMARY"

# ---- torch first, before any LD_LIBRARY_PATH change (a toolkit folder there could shadow the wheel's cuBLAS):
#      a failing import is the one line that explains every later failure.
TORCH_PREFIX=$(python3 -c "import torch; print(torch.utils.cmake_prefix_path)" 2>"$R/logs/torch_import.log")
if [ -z "$TORCH_PREFIX" ]; then
  note "FAIL  python3 cannot import torch: $(tail -1 "$R/logs/torch_import.log"); the bridgetune build needs its libtorch"
fi
# nvcc: on PATH, else the newest /usr/local/cuda*/bin; CUDACXX only when it names an executable.
if [ -z "${CUDACXX:-}" ] || [ ! -x "${CUDACXX:-}" ]; then
  unset CUDACXX
  # shellcheck disable=SC2086  # the search list is a list of globs
  NVCC=$(command -v nvcc || ls -d ${BT_GPU_NVCC_SEARCH:-/usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc} 2>/dev/null |
    sort -V | tail -1)
  [ -n "$NVCC" ] && [ -x "$NVCC" ] && export CUDACXX=$NVCC
fi
note "  nvcc: ${CUDACXX:-none found (the CUDA kernels are not built)}"

# nvJPEG: the toolkit's copy when the loader does not see one, else the pip wheels' (nvidia/*/lib): for dlopen.
# Only libnvjpeg itself goes on LD_LIBRARY_PATH (links in a private folder), never the toolkit's whole lib64,
# whose cuBLAS/nvJitLink would shadow the ones torch was built with.
NVJPEG_DIR=""
if ! ldconfig -p 2>/dev/null | grep -q libnvjpeg; then
  NVJPEG_DIR=$(ls -d /usr/local/cuda/lib64/libnvjpeg.so* /usr/local/cuda/targets/x86_64-linux/lib/libnvjpeg.so* \
    2>/dev/null | head -1 | xargs -r dirname)
  [ -z "$NVJPEG_DIR" ] && NVJPEG_DIR=$(python3 -c "
import glob, os
try:
    import nvidia
    hits = [p for b in nvidia.__path__ for p in sorted(glob.glob(os.path.join(b, '**', 'libnvjpeg.so*'), recursive=True))]
    print(os.path.dirname(hits[0]) if hits else '')
except ImportError:
    pass" 2>/dev/null)
fi
if [ -n "$NVJPEG_DIR" ]; then
  mkdir -p "$R/nvjpeg_lib"
  ln -sf "$NVJPEG_DIR"/libnvjpeg.so* "$R/nvjpeg_lib/"
  export LD_LIBRARY_PATH="$R/nvjpeg_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
echo "nvjpeg: ${NVJPEG_DIR:-ld.so cache or absent}" >>"$R/env.txt"

# ---- deps: the carried .deb bundle -> $BT_DEPS_PREFIX; sourced, so its PKG_CONFIG / CMAKE_PREFIX_PATH /
#      LD_LIBRARY_PATH / PATH (bundled cmake + ninja where the machine has none) hold for every later step.
# shellcheck source=/dev/null  # (followed, its top-level `return` reads as the end of this script)
. "$ROOT/bench/gpu/setup_deps.sh" "${BT_DEPS_PREFIX:-/tmp/btdeps}" >"$R/logs/setup_deps.log" 2>&1
DEPS_RC=$?
note "$( ((DEPS_RC == 0)) && echo "OK   " || echo "FAIL ") $(tail -1 "$R/logs/setup_deps.log")"
if ((DEPS_RC != 0)) && [ -z "${BT_GPU_SKIP_FULL:-}" ]; then
  note "  (every build below needs those libraries)"
fi
note "  build tools: cmake $(command -v cmake || echo MISSING), ninja $(command -v ninja || echo 'missing (Unix Makefiles)')"
GEN=$(command -v ninja >/dev/null && echo "-G Ninja" || echo "")
CMAKE_PREFIX=$TORCH_PREFIX
[ -n "${BT_DEPS_USR:-}" ] && CMAKE_PREFIX="${CMAKE_PREFIX:+$CMAKE_PREFIX;}$BT_DEPS_USR"
DEPS_ARGS="-DCMAKE_PREFIX_PATH='$CMAKE_PREFIX'"
[ -n "${BT_DEPS_PKG_CONFIG:-}" ] && DEPS_ARGS="$DEPS_ARGS -DPKG_CONFIG_EXECUTABLE='$BT_DEPS_PKG_CONFIG'"
[ -n "${CUDACXX:-}" ] && DEPS_ARGS="$DEPS_ARGS -DCMAKE_CUDA_COMPILER=$CUDACXX"
pack
if [ "${BT_GPU_ENV_ONLY:-0}" = 1 ]; then  # the environment logic alone (tests/bench: gpu_check_env_test.sh)
  note "env only: torch prefix ${TORCH_PREFIX:-none}, deps rc $DEPS_RC"
  exit $(( DEPS_RC != 0 || ${#TORCH_PREFIX} == 0 ))
fi

# ---- data + tokenizer (both sides read the same images and one vocabulary)
if [ ! -f "$DATA/captions.jsonl" ]; then
  step data 60 "python3 '$ROOT/bench/gpu/make_images.py' --out '$DATA' --n $NIMG --images $NDISTINCT"
fi
# Photo-like JPEGs too (texture everywhere: decode costs what a photograph's does), for the bt_bench_photo rows.
PHOTO=$DATA-photo
if [ ! -f "$PHOTO/captions.jsonl" ]; then
  step data_photo 60 "python3 '$ROOT/bench/gpu/make_images.py' --out '$PHOTO' --n $NIMG --images $NDISTINCT --style photo"
fi
TOK=$R/tokenizer
step tokenizer 30 "python3 '$ROOT/bench/gpu/train_peer.py' --write_tokenizer '$TOK'"
TOK_ARG=""
[ -f "$TOK/vocab.json" ] && TOK_ARG="--tokenizer_name '$TOK'"
# Both sides must read one real vocabulary: without it bridgetune would train a small BPE (a smaller text
# embedding, a different model), so the comparison rows are skipped, not run on a fallback.
if [ -z "$TOK_ARG" ] && [ "$DRY" != 1 ]; then
  note "FAIL  tokenizer: no vocab.json in $TOK (see logs/tokenizer.log); the comparison rows are skipped"
  BT_GPU_STEPS=${BT_GPU_STEPS:-none}
fi

# ---- peer in the background (model_only + the headline worker counts) while bridgetune configures and builds
PEER_PID=""
PEER_WORKERS=${BT_GPU_PEER_WORKERS:-${HEAD_WORKERS//,/ }}
start_peer() {
  [ -f "$DATA/captions.jsonl" ] || return 0
  PEER_BUDGET=$(($(left) - 200))
  ((PEER_BUDGET > 170)) && PEER_BUDGET=170
  [ -n "${BT_GPU_PEER_BUDGET_S:-}" ] && PEER_BUDGET=$BT_GPU_PEER_BUDGET_S
  if ((PEER_BUDGET >= 30)); then
    PEER_T0=$(date +%s)
    # shellcheck disable=SC2086  # PEER_ARGS is a list of options
    timeout -k 5 $((PEER_BUDGET + 20)) python3 "$ROOT/bench/gpu/train_peer.py" --data "$DATA" $PEER_ARGS \
      --workers $PEER_WORKERS --batch $BATCH --warmup $WARMUP --steps "${BT_GPU_PEER_STEPS:-$((STEPS - WARMUP))}" \
      --budget_s $PEER_BUDGET --out "$R/peer_train.jsonl" >"$R/logs/python_peer.log" 2>&1 &
    PEER_PID=$!
  else
    note "SKIP  python_peer (out of time budget)"
  fi
}
if want python_peer && [ "${BT_GPU_PEER_AFTER_BUILD:-0}" != 1 ]; then start_peer; fi
peer_wait() {  # waits for the background peer (it ends itself within its budget + 20 s) and reports it
  [ -z "$PEER_PID" ] && return 0
  wait "$PEER_PID"
  local rc=$?
  PEER_PID=""
  note "$( ((rc == 0)) && echo "OK   " || echo "FAIL ") python_peer rc=$rc $(($(date +%s) - PEER_T0))s ($([ "${BT_GPU_PEER_AFTER_BUILD:-0}" = 1 ] && echo "alone, after the build" || echo "background, beside the niced build"))"
  peer_summary "$R/peer_train.jsonl"
  [ -f "$R/peer_train.jsonl" ] && cp "$R/peer_train.jsonl" "$OUT/peer_train.jsonl"
  pack
}
peer_summary() {
  [ -f "$1" ] && python3 -c "
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print('  peer', r.get('loader'), 'workers', r.get('workers'), 'samples/s', r.get('samples_per_s'),
          'step_ms', r.get('step_ms'), r.get('error') or r.get('skipped') or '')
" "$1" | tee -a "$SUMMARY"
}

# ---- build: configure with the Python torch's libtorch, then the bridgetune binary alone (niced: see peer)
FULL=1
if [ -z "$TORCH_PREFIX" ]; then
  note "SKIP  configure (no torch: see the import error above)"
elif [ "${BT_GPU_SKIP_FULL:-0}" != 1 ]; then
  step configure 120 "nice -n 10 cmake -S '$ROOT' -B '$B' $GEN -DCMAKE_BUILD_TYPE=Release -DBT_CUDA=AUTO \
    -DBT_DIST_NCCL=OFF $DEPS_ARGS"
  FULL=$?
fi
if ((FULL == 0)); then
  BT_TARGETS=bridgetune
  [ "${BT_GPU_TORCH_TESTS:-0}" = 1 ] && BT_TARGETS="bridgetune test_model test_kernels test_train_torch"
  step build_bt 300 "nice -n 10 cmake --build '$B' -j $JOBS --target $BT_TARGETS $([ -n "$GEN" ] && echo "-- -k 0")"
fi
HAVE_BT=0
if [ -x "$BT" ] && "$BT" --help >/dev/null 2>&1; then
  HAVE_BT=1
  note "  bridgetune: $BT; CUDA runtimes it loads: $(ldd "$BT" 2>/dev/null | grep -o 'libcudart[^ ]*' | sort -u | tr '\n' ' ')"
fi
if want python_peer && [ "${BT_GPU_PEER_AFTER_BUILD:-0}" = 1 ]; then start_peer; fi
peer_wait

# ---- bench: the headline. Rows land in bt_bench/bench_results.json one by one ("complete": false until done).
# Like for like with the peer (full-resolution decode, resize + centre crop: the HF example's transform) unless
# EXTRA says otherwise; DCT-scaled decode is a row of its own (bt_bench_dct).
bt_bench() {  # NAME WORKERS TIMEOUT [MEDIA_DECODE (cpu: the loader decodes for the media pipeline; gpu: nvJPEG)] [EXTRA]
  step "$1" "$3" "'$BT' bench --device $DEV --model_preset $PRESET --per_device_train_batch_size $BATCH $BF16 \
    --workers $2 $([ "$DEV" = cuda ] && echo --use_media_pipeline --media_decode "${4:-cpu}") --data '${BENCH_DATA:-$DATA}' --max_steps $STEPS \
    --throughput_warmup_steps $WARMUP --repeats 1 $TOK_ARG ${5:---jpeg_dct_scaling false} --output_dir '$R/$1'"
  grep -E "^\||samples/s|rror|FAILED" "$R/logs/$1.log" | sed 's/^/  /' | tee -a "$SUMMARY"
  [ -f "$R/$1/bench_results.json" ] && cp "$R/$1/bench_results.json" "$OUT/$1.json"
  pack
}
if ((HAVE_BT)) && want bt_bench; then
  bt_bench bt_bench "$HEAD_WORKERS" 240
elif ((!HAVE_BT)); then
  note "SKIP  bridgetune bench (bridgetune did not build)"
fi
# The same rows with JPEG decode on the GPU (nvJPEG, --media_decode gpu): a step of its own, so the headline above
# never depends on it.
if ((HAVE_BT)) && [ "$DEV" = cuda ] && want bt_bench_nvjpeg; then
  bt_bench bt_bench_nvjpeg 8 100 gpu
fi

# Ours with the DCT-scaled decode (JPEGs decoded at the smallest scale >= the target size), labelled apart.
if ((HAVE_BT)) && want bt_bench_dct; then
  bt_bench bt_bench_dct 8 100 cpu "--jpeg_dct_scaling true"
fi

# Photo-like images (like for like), both sides at 8 workers.
if ((HAVE_BT)) && want bt_bench_photo && [ -f "$PHOTO/captions.jsonl" ]; then
  BENCH_DATA=$PHOTO bt_bench bt_bench_photo 8 100
fi
# A later peer run in the foreground: NAME DATA WORKERS MAX_BUDGET_S TAG (added to its JSON lines in $OUT).
peer_step() {
  local pb=$(($(left) - 40))
  ((pb > $4)) && pb=$4
  ((pb < 20)) && return 0
  step "$1" $((pb + 20)) "python3 '$ROOT/bench/gpu/train_peer.py' --data '$2' $PEER_ARGS --workers $3 \
    --batch $BATCH --warmup $WARMUP --steps $((STEPS - WARMUP)) --budget_s $pb --out '$R/$1.jsonl'"
  peer_summary "$R/$1.jsonl"
  [ -f "$R/$1.jsonl" ] && sed "s/^{/{\"run\": \"$5\", /" "$R/$1.jsonl" >>"$OUT/peer_train.jsonl"
}
if want python_peer_photo && [ -f "$PHOTO/captions.jsonl" ]; then
  peer_step python_peer_photo "$PHOTO" 8 80 photo
fi

# ---- then: tests and kernels. The full build's CUDA targets, else a build without libtorch, else cuda/ alone.
CUDA_B=$B
CUDA_OK=1
# Only the targets this configuration defines (a CPU libtorch or no nvJPEG defines fewer).
existing_targets() {
  local b=$1 help t out=()
  shift
  help=$(cmake --build "$b" --target help 2>/dev/null)
  for t in "$@"; do grep -qE "(^|[ /])$t(:| |\$)" <<<"$help" && out+=("$t"); done
  echo "${out[*]}"
}
if ((FULL == 0)); then
  TARGETS=$(existing_targets "$B" test_cuda_gpu test_kernels_gpu test_cuda_ref bench_cuda_resize test_cuda_golden \
    bench_gpu_pipeline bench_loader_gpu test_feed_gpu_media test_loader_decoded)
  if [ -n "$TARGETS" ]; then
    step build_cuda 150 "cmake --build '$B' -j $JOBS --target $TARGETS"
    CUDA_OK=$?
  fi
fi
if ((CUDA_OK != 0)) && [ -n "${CUDACXX:-}" ]; then
  CUDA_B=$ROOT/build-gpu-notorch
  step build_cuda_notorch 200 "cmake -S '$ROOT' -B '$CUDA_B' $GEN -DCMAKE_BUILD_TYPE=Release -DBT_WITH_TORCH=OFF \
    -DBT_CUDA=ON $DEPS_ARGS && cmake --build '$CUDA_B' -j $JOBS --target test_cuda_gpu test_kernels_gpu test_cuda_ref \
    test_cuda_golden test_loader_decoded bench_cuda_resize bench_gpu_pipeline bench_loader_gpu"
  CUDA_OK=$?
  if ((CUDA_OK != 0)); then  # last resort: nvcc straight, no CMake/GTest (the bench checks bit-exactness itself)
    CUDA_B=$ROOT/build-gpu-nvcc
    mkdir -p "$CUDA_B/bench/cuda"
    step build_nvcc 120 "$CUDACXX -O3 -std=c++20 -gencode arch=compute_90,code=sm_90 -I'$ROOT/src' \
      '$ROOT'/src/cuda/batch_resize.cu '$ROOT'/src/cuda/resize_plan.cpp '$ROOT'/src/cuda/resize_ref.cpp \
      '$ROOT'/src/media/resample_coeffs.cpp '$ROOT'/bench/cuda/bench_cuda_resize.cpp -o '$CUDA_B/bench/cuda/bench_cuda_resize'"
  fi
fi
# The test executables straight (not ctest: CMake 4.4's gtest discovery script failed to parse there once).
run_gtests() {  # BUILD FILTER EXE...: each found executable with --gtest_filter=FILTER; exit 1 if any fails
  local b=$1 filter=$2 rc=0 exe path
  shift 2
  for exe in "$@"; do
    path=$(find "$b/tests" -name "$exe" -type f -perm -u+x 2>/dev/null | head -1)
    [ -z "$path" ] && { echo "missing $exe"; continue; }
    echo "== $exe"
    "$path" --gtest_filter="$filter" --gtest_brief=1 --gtest_output="xml:$R/$exe.xml" || rc=1
  done
  return $rc
}
export -f run_gtests
export R
if [ -x "$CUDA_B/tests/cuda/test_cuda_gpu" ] && want parity_tests; then
  step parity_tests 90 "run_gtests '$CUDA_B' '*' test_cuda_gpu test_kernels_gpu test_cuda_ref test_cuda_golden \
    test_feed_gpu_media test_loader_decoded"
  grep -E "^==|tests? ran|PASSED|FAILED|SKIPPED|missing|^nvjpeg " "$R/logs/parity_tests.log" | head -40 | sed 's/^/  /' | tee -a "$SUMMARY"
fi
# The libtorch tests' CUDA cases (fused AdamW vs _foreach_, QuickGELU kernel vs composite, device/bf16 paths).
if ((FULL == 0)) && [ "${BT_GPU_TORCH_TESTS:-0}" = 1 ] && want torch_cuda_tests; then
  step torch_cuda_tests 120 "run_gtests '$B' '*Cuda*:*CUDA*:*Fused*:*Gpu*:*GPU*:QuickGelu.*:AdamW.*' test_model test_kernels test_train_torch"
  grep -E "^==|tests? ran|PASSED|FAILED|SKIPPED|missing" "$R/logs/torch_cuda_tests.log" | head -30 | sed 's/^/  /' | tee -a "$SUMMARY"
fi
BENCH=$CUDA_B/bench/cuda/bench_cuda_resize
if [ -x "$BENCH" ] && [ "$DEV" = cuda ] && want kernel_bench; then
  # Batch 48, 294^2 from ~740x700 inputs; each line says whether the GPU output equalled the CPU reference.
  step kernel_bench 60 "rc=0; for a in '--batch 48 --iters 200 --type bf16 --mode train' \
    '--batch 48 --iters 200 --type fp32 --mode eval' '--batch 256 --iters 50 --type bf16 --mode train'; do \
    '$BENCH' --size 294 \$a >>'$R/kernel_bench.jsonl' || rc=1; done; exit \$rc"
  sed 's/^/  /' "$R/kernel_bench.jsonl" 2>/dev/null | tee -a "$SUMMARY"
fi

# ---- other worker counts: 2 on both sides (the published peer figures use 0-2 workers)
if ((HAVE_BT)) && want bt_bench_w2; then
  bt_bench bt_bench_w2 2 120
fi
if want python_peer_w2 && [ -f "$DATA/captions.jsonl" ]; then
  peer_step python_peer_w2 "$DATA" 2 90 w2
fi

# ---- issue 27's memory modes: plain, --gradient_checkpointing, exact accumulation 2 x half batch (and plain again)
if ((HAVE_BT)) && want memory_modes; then
  step memory_modes 150 "bash '$ROOT/bench/gpu/memory_modes_bench.sh' '$BT' '$DATA' '$R/memory_modes' $DEV $PRESET $BATCH \
    $((WARMUP + 8)) $BF16 --dropout 0"
  grep -h "^memory_modes" "$R/logs/memory_modes.log" | sed 's/^/  /' | tee -a "$SUMMARY"
fi

# ---- the fused ops' worth: in-memory + workers 8 again with BRIDGETUNE_FUSED_OPS=0 (composite QuickGELU, _foreach_ AdamW)
#      beside the headline's fused rows
if ((HAVE_BT)) && [ "$DEV" = cuda ] && want fused_ab; then
  BRIDGETUNE_FUSED_OPS=0 bt_bench bt_bench_unfused 8 120
fi

# ---- loader benches: RAM-resident JPEGs through the GPU media path, then the real loader (decode-only + GPU)
PIPE=$CUDA_B/bench/cuda/bench_gpu_pipeline
if [ -x "$PIPE" ] && [ "$DEV" = cuda ] && [ -f "$DATA/captions.jsonl" ] && want pipeline_bench; then
  step pipeline_bench 60 "'$PIPE' --data '$DATA' --threads 1,2,8,16 --batches 20 --mode train >'$R/pipeline_bench.jsonl' && \
    '$PIPE' --data '$DATA' --threads 1,8,16 --batches 20 --mode eval >>'$R/pipeline_bench.jsonl'"
  sed 's/^/  /' "$R/pipeline_bench.jsonl" | tee -a "$SUMMARY"
fi
LGPU=$CUDA_B/bench/cuda/bench_loader_gpu
if [ -x "$LGPU" ] && [ "$DEV" = cuda ] && [ -f "$DATA/captions.jsonl" ] && want loader_gpu_bench; then
  step loader_gpu_bench 60 "'$LGPU' --data '$DATA' --workers 0,1,2,8 --batches 15 --mode train >'$R/loader_gpu_bench.jsonl'"
  sed 's/^/  /' "$R/loader_gpu_bench.jsonl" | tee -a "$SUMMARY"
fi

note "done in $(($(date +%s) - T0))s; figures in $OUT (summary.txt, results.tgz, bt_bench.json, peer_train.jsonl)"
pack
