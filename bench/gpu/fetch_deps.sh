#!/usr/bin/env bash
# Downloads (here, on a Debian 12 machine with apt) the .deb files of bridgetune's build dependencies into
# .gpu_deps/, for a machine that has neither network nor a package manager (the borrowed GPU machine).
# There, bench/gpu/setup_deps.sh unpacks them into a prefix (never into /) and points pkg-config and CMake at
# it; bench/gpu/gpu_check.sh does that by itself. Two steps:
#     bash bench/gpu/fetch_deps.sh                                   # here: fills .gpu_deps/ (git-ignored)
#     run(carry=[".gpu_deps"], command="bash bench/gpu/gpu_check.sh")      # there, with the device tool
#
# What is bundled: the -dev packages of every find_package/pkg_check_modules of CMakeLists.txt and
# bench/CMakeLists.txt, the runtime libraries they link (with libarchive's whole runtime closure, libxml2 and
# ICU included, since an Ubuntu 24.04 image may lack any of them), and pkgconf. Not bundled: libtorch, gloo,
# OpenBLAS, Python (the GPU machine's pip torch provides them), libc/libstdc++/libgcc (Debian 12's libraries
# need glibc 2.36 and GLIBCXX from GCC 12, both older than Ubuntu 24.04's). setup_deps.sh only puts a bundled
# runtime library on LD_LIBRARY_PATH when the machine lacks that soname, so the bundle never shadows the
# machine's own copies for python/torch.
#
# Idempotent: a package whose .deb is already in .gpu_deps/ is not downloaded again. Prints one line per
# package and the total size. Needs apt-get and a reachable Debian 12 (bookworm) mirror, amd64.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=${BT_GPU_DEPS_DIR:-$PWD/.gpu_deps}
ARCH=${BT_GPU_DEPS_ARCH:-amd64}

# -dev packages: headers, .so links, .pc files, CMake package configs.
DEV=(
  libturbojpeg0-dev   # pkg_check_modules(libturbojpeg)
  libspng-dev         # pkg_check_modules(spng)
  libpng-dev          # find_package(PNG)
  libarchive-dev      # pkg_check_modules(libarchive)
  libhwy-dev          # pkg_check_modules(libhwy)
  libpcre2-dev        # pkg_check_modules(libpcre2-8)
  libsnappy-dev       # pkg_check_modules(snappy)
  libzstd-dev         # pkg_check_modules(libzstd)
  zlib1g-dev          # find_package(ZLIB)
  nlohmann-json3-dev  # find_package(nlohmann_json), header-only
  libcli11-dev        # find_package(CLI11), header-only
  libgtest-dev        # find_package(GTest): static libgtest*.a + GTestConfig.cmake
  libgmock-dev        # libgmock*.a, which GTestTargets.cmake names (configure fails without them)
  libbenchmark-dev    # find_package(benchmark) in bench/CMakeLists.txt
)
# Runtime shared libraries those link (sonames the executables and gtest_discover_tests need).
RUNTIME=(
  libturbojpeg0 libspng0 libpng16-16 libarchive13 libhwy1
  libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3   # libpcre2-dev's .so links name all four
  libsnappy1v5 libzstd1 zlib1g libbenchmark1debian
  # libarchive13's own dependencies (Debian 12 builds it with nettle, libxml2 and ICU through libxml2):
  libacl1 libbz2-1.0 liblz4-1 liblzma5 libnettle8 libxml2 libicu72
)
# pkg-config (CMake's FindPkgConfig needs an executable): /usr/bin/pkgconf + libpkgconf.so.3. CMake 3.25 and
# Ninja for a machine without them (setup_deps.sh puts them on PATH only then), with cmake's runtime closure
# beyond libarchive's (libcurl and what it links). They need glibc >= 2.36 like the rest of the bundle.
TOOLS=(pkgconf pkgconf-bin libpkgconf3 cmake cmake-data ninja-build
  libjsoncpp25 librhash0 libuv1 libcurl4 libnghttp2-14 libidn2-0 libunistring2 librtmp1 libssh2-1 libpsl5 libssl3
  libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1 libldap-2.5-0 libsasl2-2
  libsasl2-modules-db libdb5.3 libbrotli1 libgnutls30 libhogweed6 libgmp10 libp11-kit0 libtasn1-6 libffi8)
PKGS=("${DEV[@]}" "${RUNTIME[@]}" "${TOOLS[@]}")

command -v apt-get >/dev/null || { echo "fetch_deps: apt-get not found (run this on Debian 12)" >&2; exit 1; }
mkdir -p "$DEST"
cd "$DEST"

# .deb names encode the epoch ':' as %3a; any version of a package already here counts as downloaded.
have() { compgen -G "$1_*_$ARCH.deb" >/dev/null || compgen -G "$1_*_all.deb" >/dev/null; }
file_of() { compgen -G "$1_*_$ARCH.deb" || compgen -G "$1_*_all.deb"; }

updated=0
download() {
  local p=$1
  # Root must not hand the download to the unprivileged _apt sandbox user (it cannot write here).
  if apt-get download -q -o APT::Sandbox::User=root "$p:$ARCH" >"/tmp/fetch_deps.$$.log" 2>&1 ||
     apt-get download -q -o APT::Sandbox::User=root "$p" >>"/tmp/fetch_deps.$$.log" 2>&1; then
    return 0
  fi
  if ((updated == 0)) && [ "$(id -u)" -eq 0 ]; then  # stale package lists (404): refresh once and retry
    updated=1
    echo "  (apt-get update)"
    apt-get update -q >/dev/null 2>&1 || true
    apt-get download -q -o APT::Sandbox::User=root "$p:$ARCH" >"/tmp/fetch_deps.$$.log" 2>&1 && return 0
  fi
  cat "/tmp/fetch_deps.$$.log" >&2
  return 1
}

failed=()
for p in "${PKGS[@]}"; do
  if have "$p"; then
    state=cached
  elif download "$p"; then
    state=downloaded
  else
    failed+=("$p")
    printf '%-22s FAILED\n' "$p"
    continue
  fi
  f=$(file_of "$p" | head -1)
  printf '%-22s %-34s %8s KiB  %s\n' "$p" "$(dpkg-deb -f "$f" Version 2>/dev/null || echo '?')" \
    "$(($(stat -c %s "$f") / 1024))" "$state"
done
rm -f "/tmp/fetch_deps.$$.log"

# A manifest for the record (setup_deps.sh unpacks every .deb here, whatever the manifest says).
for f in *.deb; do
  printf '%s %s %s\n' "$(dpkg-deb -f "$f" Package)" "$(dpkg-deb -f "$f" Version)" "$f"
done >MANIFEST.txt
all=(./*.deb)
n=${#all[@]}
bytes=$(cat "${all[@]}" | wc -c)
echo "fetch_deps: $n .deb files, $(awk "BEGIN{printf \"%.1f\", $bytes / 1048576}") MiB in $DEST"
if ((${#failed[@]})); then
  echo "fetch_deps: FAILED: ${failed[*]}" >&2
  exit 1
fi
