#!/usr/bin/env bash
# The suite (ctest + pytest of a built tree) on several numerical paths: oneDNN capped to AVX2 and to SSE4.1, torch's
# own kernels without vector code, torch's threads at 1 and at 2. A test whose verdict depends on a GEMM's
# reduction order or on the CPU's instruction set fails on one of them (issue 52). Not part of `make test` (it runs
# the suite five times: ~20 min on 2 cores); run by hand after a change to tests that compare numbers:
#   bash scripts/numeric_paths.sh [build-dir] [ctest args...]
set -uo pipefail
BUILD=${1:-build}
shift || true
PYTHON=${PYTHON:-$(if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3; fi)}
export OPENBLAS_NUM_THREADS=1
paths=(
  "ONEDNN_MAX_CPU_ISA=AVX2"
  "ONEDNN_MAX_CPU_ISA=SSE41"
  "ATEN_CPU_CAPABILITY=default"
  "BRIDGETUNE_MAX_THREADS=1 OMP_NUM_THREADS=1"
  "BRIDGETUNE_MAX_THREADS=2 OMP_NUM_THREADS=2"
)
failed=()
for p in "${paths[@]}"; do
  start=$(date +%s)
  # shellcheck disable=SC2086 # each path is a list of NAME=VALUE words
  env $p ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)" --timeout 600 "$@" >"/tmp/numeric_paths.ctest.log" 2>&1
  c=$?
  # shellcheck disable=SC2086
  env $p PYTHONPATH="$BUILD/python" BT_BUILD_DIR="$BUILD" PYTHONDONTWRITEBYTECODE=1 "$PYTHON" -m pytest -q \
    -p no:cacheprovider tests/python >"/tmp/numeric_paths.pytest.log" 2>&1
  y=$?
  printf '%-45s ctest %s  pytest %s  (%d s)\n' "$p" "$([ $c = 0 ] && echo ok || echo FAILED)" \
    "$([ $y = 0 ] && echo ok || echo FAILED)" $(($(date +%s) - start))
  if [ $c != 0 ]; then grep -E "\(Failed\)|\(Timeout\)|\*\*\*" /tmp/numeric_paths.ctest.log | sed 's/^/    /'; failed+=("$p"); fi
  if [ $y != 0 ]; then grep -E "^FAILED|Error" /tmp/numeric_paths.pytest.log | head -20 | sed 's/^/    /'; failed+=("$p"); fi
done
if [ ${#failed[@]} -ne 0 ]; then echo "failed on: ${failed[*]}"; exit 1; fi
echo "every path passed"
