#!/usr/bin/env bash
# Installs the Debian 12 packages bridgetune needs to build, test and benchmark; does nothing when all are there.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build ccache pkg-config clang lld libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libpng-dev libwebp-dev libgif-dev libtiff-dev libarchive-dev libhwy-dev libpcre2-dev
  libsnappy-dev libzstd-dev zlib1g-dev libthrift-dev libcurl4-openssl-dev
  libtorch-dev libgloo-dev libopenblas0-pthread
  python3 python3-numpy python3-pil python3-torch python3-torchvision
  shellcheck  # bench.gpu_scripts_shellcheck: the GPU check scripts, which no CI machine can run
  python3-dev pybind11-dev python3-pybind11 python3-pytest
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing: ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
