#!/usr/bin/env bash
# Compile-checks every libtorch-dependent source against a newer libtorch's headers than Debian 12's 1.13, with
# the CUDA branches on (BT_TORCH_CUDA, the CUDA toolkit's headers), so the first build on the GPU machine (torch
# 2.x wheels) does not meet a header change for the first time. A developer's tool: it downloads Debian
# unstable's libtorch-dev .deb (headers only, nothing installed) and runs `g++ -fsyntax-only` with the flags of
# an existing build's compile_commands.json.
#
#     bash bench/gpu/libtorch_compile_check.sh [BUILD_DIR]     # default: build (configured by `make build`)
#
# Knobs: BT_LIBTORCH_DEB_URL (the .deb; default: unstable's current libtorch-dev, found in its Packages index),
# BT_CHECK_JOBS (nproc), BT_CHECK_FILTER (a grep -E on the source paths). Prints one line per failing file
# and the version checked; exit status 1 when any file fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
CC_JSON=$BUILD/compile_commands.json
[ -f "$CC_JSON" ] || { echo "compile_check: $CC_JSON missing: configure a build first (make build)" >&2; exit 1; }
CUDA_INC=$(ls -d /usr/local/cuda/include 2>/dev/null || true)
[ -n "$CUDA_INC" ] || { echo "compile_check: no CUDA toolkit headers in /usr/local/cuda/include" >&2; exit 1; }
WORK=${BT_CHECK_DIR:-/tmp/bt_libtorch_check}
mkdir -p "$WORK"
MIRROR=https://deb.debian.org/debian
if [ -z "${BT_LIBTORCH_DEB_URL:-}" ]; then
  curl -fsS -o "$WORK/Packages.xz" "$MIRROR/dists/sid/main/binary-amd64/Packages.xz"
  FILE=$(xz -dc "$WORK/Packages.xz" | awk '/^Package: libtorch-dev$/{p=1} p && !d && /^Filename:/{print $2; d=1}')
  [ -n "$FILE" ] || { echo "compile_check: no libtorch-dev in Debian unstable's index" >&2; exit 1; }
  BT_LIBTORCH_DEB_URL=$MIRROR/$FILE
fi
DEB=$WORK/$(basename "$BT_LIBTORCH_DEB_URL")
[ -f "$DEB" ] || curl -fsS -o "$DEB" "$BT_LIBTORCH_DEB_URL"
ROOT=$WORK/root
rm -rf "$ROOT"
dpkg-deb -x "$DEB" "$ROOT"
INC=$ROOT/usr/include
VERSION=$(awk '/define TORCH_VERSION_(MAJOR|MINOR|PATCH) /{v = (v == "" ? $3 : v "." $3)} END{print v}' \
  "$INC/torch/csrc/api/include/torch/version.h" "$INC/torch/headeronly/version.h" 2>/dev/null || true)
# Headers a CUDA build of torch generates, which a CPU package lacks: minimal stand-ins (no cuDNN, no cuSPARSELt).
SHIM=$WORK/shim
mkdir -p "$SHIM/c10/cuda/impl" "$SHIM/ATen/cuda"
echo '#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS' >"$SHIM/c10/cuda/impl/cuda_cmake_macros.h"
echo '#pragma once
#define AT_CUDNN_ENABLED() 0
#define AT_CUSPARSELT_ENABLED() 0
#define AT_HIPSPARSELT_ENABLED() 0
#define AT_ROCM_ENABLED() 0
#define AT_MAGMA_ENABLED() 0
#define NVCC_FLAGS_EXTRA ""' >"$SHIM/ATen/cuda/CUDAConfig.h"
echo "compile_check: libtorch $VERSION headers ($(basename "$DEB")), CUDA headers $CUDA_INC"

# One command per torch-dependent translation unit: Debian's torch include folders swapped for the new ones,
# no precompiled header (built for 1.13), syntax only, the CUDA-libtorch branches on.
python3 - "$CC_JSON" "$INC" "$WORK/commands.txt" "${BT_CHECK_FILTER:-.}" "$SHIM" <<'EOF'
import json, re, shlex, sys
cc, inc, out, flt, shim = sys.argv[1:6]
lines = []
for e in json.load(open(cc)):
    cmd = e.get("command") or " ".join(e["arguments"])
    if "torch/csrc/api/include" not in cmd or not re.search(flt, e["file"]) or e["file"].endswith(".cu"):
        continue
    args = shlex.split(cmd)
    keep, skip = [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in ("-o", "-include") or (a == "-c"):
            skip = a != "-c"
            continue
        if a == "-Winvalid-pch":
            continue
        if a == "/usr/include/torch/csrc/api/include":
            a = inc + "/torch/csrc/api/include"
        keep.append(a)
    keep[1:1] = ["-isystem", inc + "/torch/csrc/api/include", "-isystem", inc, "-isystem", shim,
                 "-DBT_TORCH_CUDA=1", "-fsyntax-only",
                 "-w"]
    keep.append(e["file"])
    lines.append(e["file"] + "\t" + shlex.join(keep))
open(out, "w").write("\n".join(lines) + "\n")
print(f"compile_check: {len(lines)} files")
EOF
FAILS=$WORK/fails
: >"$FAILS"
export FAILS WORK
check_one() {
  local file=${1%%$'\t'*} cmd=${1#*$'\t'} log
  log=$WORK/$(echo "$file" | tr '/' '_').log
  if (cd "$(dirname "$file")" && eval "$cmd") >"$log" 2>&1; then
    rm -f "$log"
  else
    echo "FAIL $file: $(grep -m1 'error' "$log")" | tee -a "$FAILS"
  fi
}
export -f check_one
tr '\n' '\0' <"$WORK/commands.txt" | xargs -0 -n1 -P "${BT_CHECK_JOBS:-$(nproc)}" bash -c 'check_one "$0"'
if [ -s "$FAILS" ]; then
  echo "compile_check: $(wc -l <"$FAILS") file(s) fail against libtorch $VERSION (logs in $WORK)"
  exit 1
fi
echo "compile_check: every file compiles against libtorch $VERSION with the CUDA branches on"
