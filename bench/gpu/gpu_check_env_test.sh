#!/usr/bin/env bash
# The GPU check's environment logic, on a machine without a GPU (BT_GPU_ENV_ONLY=1 stops after it): a missing
# nvcc, a python3 whose `import torch` fails and a missing dependency bundle each end in one clear summary line,
# and CUDACXX is never exported for a path that does not exist.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/fake" "$T/empty"
printf '#!/bin/sh\necho "ModuleNotFoundError: No module named '"'"'torch'"'"'" >&2\nexit 1\n' >"$T/fake/python3"
printf '#!/bin/sh\nexit 1\n' >"$T/fake/pkg-config"
chmod +x "$T/fake/"*
fails=0
check() {  # NAME PATTERN FILE
  if grep -qE "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1: no line matching '$2' in:"; cat "$3"; fails=$((fails + 1)); fi
}
run() {  # NAME ENV... : runs the env-only check, summary in $T/NAME.txt, exit status in $T/NAME.rc
  local name=$1
  shift
  env "$@" OUT="$T/$name.out" BT_GPU_RESULTS="$T/$name.r" BT_GPU_ENV_ONLY=1 bash "$ROOT/bench/gpu/gpu_check.sh" \
    >"$T/$name.log" 2>&1
  echo $? >"$T/$name.rc"
  cp "$T/$name.out/summary.txt" "$T/$name.txt" 2>/dev/null || cp "$T/$name.log" "$T/$name.txt"
}
# 1. no nvcc anywhere, CUDACXX naming a missing file, and a python3 without torch
run broken PATH="$T/fake:/usr/bin:/bin" CUDACXX=/nonexistent/nvcc BT_GPU_NVCC_SEARCH=/nonexistent/nvcc \
  BT_GPU_DEPS_DIR="$T/empty"
check "broken torch: one line naming the import error" "^FAIL +python3 cannot import torch: ModuleNotFoundError" "$T/broken.txt"
check "no nvcc: said, CUDACXX not kept" "nvcc: none found" "$T/broken.txt"
check "missing bundle: one line saying what to run" "^FAIL +setup_deps: no .deb bundle .*fetch_deps.sh" "$T/broken.txt"
if [ "$(cat "$T/broken.rc")" = 0 ]; then echo "FAIL broken environment exited 0"; fails=$((fails + 1)); fi
# 2. the same machine with the system python3 and pkg-config: no failure lines about them
if /usr/bin/python3 -c "import torch" 2>/dev/null && pkg-config --exists libturbojpeg spng libarchive libhwy; then
  run healthy PATH="/usr/bin:/bin" BT_GPU_DEPS_DIR="$T/empty"
  check "healthy: torch found" "env only: torch prefix /" "$T/healthy.txt"
  if grep -q "^FAIL" "$T/healthy.txt"; then echo "FAIL healthy environment reported a failure"; cat "$T/healthy.txt"; fails=$((fails + 1)); fi
  if [ "$(cat "$T/healthy.rc")" != 0 ]; then echo "FAIL healthy environment exited $(cat "$T/healthy.rc")"; fails=$((fails + 1)); fi
fi
exit $((fails != 0))
