# shellcheck shell=bash
# Makes bridgetune's build dependencies usable on a machine without network or package manager (the borrowed
# GPU machine): unpacks every .deb of .gpu_deps/ (filled by bench/gpu/fetch_deps.sh on a Debian 12 machine,
# carried over with the working tree) into PREFIX (default /tmp/btdeps; never into /), and points pkg-config,
# CMake and the dynamic loader at it.
#
#     . bench/gpu/setup_deps.sh [PREFIX]     # sourced (bench/gpu/gpu_check.sh does this): sets the environment
#     bash bench/gpu/setup_deps.sh [PREFIX]  # unpacks only, and prints the environment it would set
#
# After sourcing:
#   BT_DEPS_USR          PREFIX/usr: give it to CMake (-DCMAKE_PREFIX_PATH="...;$BT_DEPS_USR"); also prepended
#                        to the CMAKE_PREFIX_PATH environment variable. Empty when there is no bundle.
#   BT_DEPS_PKG_CONFIG   the bundled pkg-config (a wrapper around Debian's pkgconf), for -DPKG_CONFIG_EXECUTABLE;
#                        also exported as PKG_CONFIG and first on PATH.
#   PKG_CONFIG_PATH      the bundle's .pc folders first (the .pc files are rewritten: prefix=PREFIX/usr, and
#                        Requires.private lines dropped: they name packages, e.g. libxml-2.0, not bundled as -dev).
#   LIBRARY_PATH         deliberately NOT set: CMake takes LIBRARY_PATH folders for implicit link folders and
#                        then leaves them out of the build RUNPATH (the binaries would silently load the
#                        machine's copies). CMake links every bundled library by full path anyway.
#   LD_LIBRARY_PATH      + PREFIX/.bt/lib: links to the bundled runtime libraries whose soname this machine does
#                        NOT have (so python/torch keep the machine's own copies). Built binaries find the
#                        libraries they link directly through CMake's build RUNPATH (the bundle's lib folder);
#                        this covers the indirect ones (e.g. libarchive's libxml2 and ICU) and pkgconf's.
# With no .gpu_deps (a machine that has the -dev packages installed) it only says so and changes nothing.
# Idempotent: a second run with the same .debs reuses PREFIX (stamp PREFIX/.bt/stamp); a PREFIX it did not make
# (no PREFIX/.bt/owner) is never deleted.
# Extraction: dpkg-deb -x; without dpkg-deb: ar + tar (+ xz); without those: python3 (ar + tarfile/lzma).

_bt_setup_deps() {
  local here root deps prefix arch=x86_64-linux-gnu
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  root=$(cd "$here/../.." && pwd)
  deps=${BT_GPU_DEPS_DIR:-$root/.gpu_deps}
  prefix=${1:-${BT_DEPS_PREFIX:-/tmp/btdeps}}
  export BT_DEPS_USR="" BT_DEPS_PKG_CONFIG=""

  local debs=()
  [ -d "$deps" ] && mapfile -t debs < <(find "$deps" -maxdepth 1 -name '*.deb' | LC_ALL=C sort)
  if ((${#debs[@]} == 0)); then
    # Without the bundle the machine's own -dev packages must do; say at once when they cannot.
    if ! command -v pkg-config >/dev/null || ! pkg-config --exists libturbojpeg spng libarchive libhwy 2>/dev/null; then
      echo "setup_deps: no .deb bundle in $deps and this machine lacks the build libraries (pkg-config finds no" \
        "libturbojpeg/spng/libarchive/libhwy): run 'bash bench/gpu/fetch_deps.sh' on Debian 12 and carry .gpu_deps" >&2
      return 1
    fi
    echo "setup_deps: no .deb bundle in $deps: using the machine's own packages (nothing set)"
    return 0
  fi
  if [[ $prefix =~ ^/*$ ]]; then
    echo "setup_deps: refusing prefix '$prefix' (use a fresh folder such as /tmp/btdeps)" >&2
    return 1
  fi
  while [[ $prefix == */ ]]; do prefix=${prefix%/}; done
  case $prefix in
    /*) ;;
    *) prefix=$PWD/$prefix ;;
  esac
  if ! [[ $prefix =~ ^/[A-Za-z0-9._+/-]+$ ]] || [[ $prefix =~ ^/+(usr|usr/local|opt|etc|var|tmp|home|root|lib|bin)?/*$ ]]; then
    echo "setup_deps: refusing prefix '$prefix' (use a fresh folder such as /tmp/btdeps)" >&2
    return 1
  fi

  local t0=$SECONDS stamp state key
  stamp=$prefix/.bt/stamp
  key="v1 $(for f in "${debs[@]}"; do printf '%s:%s ' "${f##*/}" "$(stat -c %s "$f")"; done)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
    state=reused
  else
    if [ -e "$prefix" ] && [ -n "$(ls -A "$prefix" 2>/dev/null)" ] && [ ! -f "$prefix/.bt/owner" ]; then
      echo "setup_deps: $prefix exists, is not empty and was not made by setup_deps: refusing to replace it" >&2
      return 1
    fi
    rm -rf "$prefix" && mkdir -p "$prefix/.bt/bin" "$prefix/.bt/lib" && echo "bench/gpu/setup_deps.sh" >"$prefix/.bt/owner" ||
      return 1
    local f how="" failed=0
    for f in "${debs[@]}"; do
      if command -v dpkg-deb >/dev/null && [ -z "${BT_DEPS_NO_DPKG:-}" ]; then
        how=dpkg-deb
        dpkg-deb -x "$f" "$prefix" && continue
      fi
      if command -v ar >/dev/null && command -v xz >/dev/null && [ -z "${BT_DEPS_NO_AR:-}" ]; then
        how="ar+tar"
        local member
        member=$(ar t "$f" | grep -m1 '^data\.tar')
        case $member in
          data.tar.xz) (ar p "$f" "$member" | xz -dc | tar -x -C "$prefix" -f -) && continue ;;
          data.tar.gz) (ar p "$f" "$member" | gzip -dc | tar -x -C "$prefix" -f -) && continue ;;
          data.tar) (ar p "$f" "$member" | tar -x -C "$prefix" -f -) && continue ;;
        esac
      fi
      how=python3
      python3 - "$f" "$prefix" <<'PY' && continue
import io, sys, tarfile
deb, dest = sys.argv[1], sys.argv[2]
raw = open(deb, "rb").read()
assert raw[:8] == b"!<arch>\n", "not a .deb (ar) file"
pos = 8
while pos + 60 <= len(raw):
    name = raw[pos:pos + 16].decode().strip().rstrip("/")
    size = int(raw[pos + 48:pos + 58].decode().strip())
    if name.startswith("data.tar"):
        with tarfile.open(fileobj=io.BytesIO(raw[pos + 60:pos + 60 + size]), mode="r:*") as t:
            try:
                t.extractall(dest, filter="tar")
            except TypeError:  # Python < 3.12 without extraction filters
                t.extractall(dest)
        sys.exit(0)
    pos += 60 + size + (size & 1)
sys.exit("no data.tar member in " + deb)
PY
      echo "setup_deps: could not unpack ${f##*/}" >&2
      failed=1
    done
    ((failed)) && return 1
    # Debian 12 packages still ship some files under /lib and /bin: merge them into usr/ as on a merged-/usr
    # system, then make absolute symlinks (e.g. usr/lib/.../libz.so -> /lib/.../libz.so.1.2.13) point inside.
    local d l tgt
    for d in bin sbin lib lib32 lib64 libx32; do
      if [ -d "$prefix/$d" ] && [ ! -L "$prefix/$d" ]; then
        mkdir -p "$prefix/usr/$d" && cp -a "$prefix/$d/." "$prefix/usr/$d/" && rm -rf "${prefix:?}/$d" &&
          ln -s "usr/$d" "$prefix/$d"
      fi
    done
    while IFS= read -r l; do
      tgt=$(readlink "$l")
      ln -sfn "$prefix$tgt" "$l"
    done < <(find "$prefix" -type l -lname '/*')
    # pkg-config files: /usr -> PREFIX/usr; drop Requires.private (pkg-config resolves those modules even
    # without --static, and libarchive's name libxml-2.0, liblzma, ... whose -dev packages are not bundled).
    for f in "$prefix/usr/lib/$arch"/pkgconfig/*.pc "$prefix"/usr/lib/pkgconfig/*.pc "$prefix"/usr/share/pkgconfig/*.pc; do
      [ -f "$f" ] || continue
      sed -i -E -e '/^Requires\.private:/d' \
        -e "s#^([A-Za-z_][A-Za-z0-9_.]*)=/usr(/|\$)#\\1=$prefix/usr\\2#" \
        -e "s#(-[IL])/usr/#\\1$prefix/usr/#g" "$f"
    done
    # CMake package configs are relocatable (paths relative to the file), except a few hard-coded /usr paths
    # (Snappy, libjpeg-turbo): point those inside too.
    while IFS= read -r f; do
      sed -i -E "s#\"/usr(/|\")#\"$prefix/usr\\1#g" "$f"
    done < <(find "$prefix/usr/lib/$arch/cmake" "$prefix/usr/share/cmake" "$prefix/usr/lib/cmake" -name '*.cmake' 2>/dev/null)
    # pkg-config: Debian's pkgconf, with its libpkgconf found whatever LD_LIBRARY_PATH says.
    cat >"$prefix/.bt/bin/pkg-config" <<SH
#!/bin/sh
LD_LIBRARY_PATH="$prefix/usr/lib/$arch\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$prefix/usr/bin/pkgconf" "\$@"
SH
    chmod +x "$prefix/.bt/bin/pkg-config"
    printf '%s' "$key" >"$stamp"
    state="unpacked with $how in $((SECONDS - t0))s"
  fi

  # Runtime overlay: the bundled sonames this machine lacks (system folders + the ld.so cache).
  local libdir=$prefix/usr/lib/$arch have_sys missing=() name need
  have_sys=$( { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | awk '/x86-64/{print $1}')
  rm -f "$prefix"/.bt/lib/*
  for l in "$libdir"/lib*.so.*; do
    [ -e "$l" ] || continue
    name=${l##*/}
    local sys_has=0
    for d in /lib/$arch /usr/lib/$arch /lib64 /usr/lib64 /lib /usr/lib /usr/local/lib; do
      [ -e "$d/$name" ] && { sys_has=1; break; }
    done
    ((sys_has == 0)) && grep -qxF "$name" <<<"$have_sys" && sys_has=1
    if ((sys_has == 0)); then
      ln -sfn "$l" "$prefix/.bt/lib/$name"
      [[ $name =~ ^lib[^.]+\.so\.[0-9]+[a-z]*$ ]] && missing+=("${name%%.so*}")
    fi
  done

  # glibc: Debian 12's libraries may need up to 2.36 (libarchive.so.13 does). On an older glibc a bundled library
  # that needs more is replaced by the machine's copy of the same soname (headers stay the bundle's: same ABI);
  # without one it is reported (configure then names it).
  local glibc too_new=() swapped=() sys
  glibc=${BT_DEPS_GLIBC:-$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')}  # override: tests
  if [ -n "$glibc" ]; then
    for l in "$libdir"/lib*.so.*; do
      { [ -f "$l" ] && [ ! -L "$l" ]; } || continue
      need=$(grep -ao 'GLIBC_2\.[0-9]*' "$l" | sort -uV | tail -1)
      need=${need#GLIBC_}
      [ -z "$need" ] || [ "$(printf '%s\n%s\n' "$need" "$glibc" | sort -V | tail -1)" = "$glibc" ] && continue
      name=$(objdump -p "$l" 2>/dev/null | awk '/SONAME/{print $2}')
      [ -n "$name" ] || name=$(sed -E 's/^(lib.*\.so\.[0-9]+).*/\1/' <<<"${l##*/}")
      sys=$( { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | awk -v n="$name" '$1 == n && /x86-64/{print $NF; exit}')
      if [ -n "$sys" ]; then
        ln -sfn "$sys" "$libdir/$name"
        ln -sfn "$sys" "$libdir/${name%%.so*}.so"
        rm -f "$prefix/.bt/lib/$name"
        swapped+=("$name")
      else
        too_new+=("$name(glibc $need)")
      fi
    done
  fi

  # Build tools: the bundled cmake / ninja only where the machine has none (or a CMake older than 3.22).
  local tools=() have_cmake
  have_cmake=$(cmake --version 2>/dev/null | awk 'NR == 1 {print $3}')
  if [ -z "$have_cmake" ] || [ "$(printf '%s\n3.22\n' "$have_cmake" | sort -V | head -1)" != 3.22 ]; then
    LD_LIBRARY_PATH="$prefix/.bt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$prefix/usr/bin/cmake" --version >/dev/null 2>&1 &&
      ln -sfn "$prefix/usr/bin/cmake" "$prefix/.bt/bin/cmake" && ln -sfn "$prefix/usr/bin/ctest" "$prefix/.bt/bin/ctest" &&
      tools+=(cmake)
  fi
  if ! command -v ninja >/dev/null && "$prefix/usr/bin/ninja" --version >/dev/null 2>&1; then
    ln -sfn "$prefix/usr/bin/ninja" "$prefix/.bt/bin/ninja" && tools+=(ninja)
  fi

  _bt_prepend() { eval "export $1=\"$2\${$1:+:\$$1}\""; }
  export BT_DEPS_USR=$prefix/usr
  export BT_DEPS_PKG_CONFIG=$prefix/.bt/bin/pkg-config
  export PKG_CONFIG=$BT_DEPS_PKG_CONFIG
  _bt_prepend PATH "$prefix/.bt/bin"
  _bt_prepend PKG_CONFIG_PATH "$libdir/pkgconfig:$prefix/usr/share/pkgconfig"
  _bt_prepend CMAKE_PREFIX_PATH "$prefix/usr"
  _bt_prepend LD_LIBRARY_PATH "$prefix/.bt/lib"
  unset -f _bt_prepend

  # Check now what configure will ask for, so a broken bundle shows here and not as a CMake error.
  local mods="libturbojpeg spng libarchive libpcre2-8 libhwy snappy libzstd" check
  # shellcheck disable=SC2086  # $mods is a list
  if "$BT_DEPS_PKG_CONFIG" --exists $mods 2>/dev/null; then
    check="pkg-config ok ($("$BT_DEPS_PKG_CONFIG" --modversion libturbojpeg 2>/dev/null | head -1) turbojpeg)"
  else
    check="pkg-config FAILED for: $(for m in $mods; do "$BT_DEPS_PKG_CONFIG" --exists "$m" 2>/dev/null || printf '%s ' "$m"; done)"
  fi
  echo "setup_deps: ${#debs[@]} .debs -> $prefix ($state); $check; ${#missing[@]} bundled libs the machine lacks" \
    "on LD_LIBRARY_PATH (${missing[*]:-none}); glibc ${glibc:-?}: machine's copy for (${swapped[*]:-none}), unusable" \
    "(${too_new[*]:-none}); bundled tools on PATH (${tools[*]:-none}); CMake: -DCMAKE_PREFIX_PATH=...;$BT_DEPS_USR" \
    "-DPKG_CONFIG_EXECUTABLE=$BT_DEPS_PKG_CONFIG"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then  # executed, not sourced: unpack and show the environment
  _bt_setup_deps "$@" || exit 1
  for v in BT_DEPS_USR BT_DEPS_PKG_CONFIG PKG_CONFIG PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH; do
    [ -n "${!v:-}" ] && printf 'export %s=%q\n' "$v" "${!v}"
  done
  exit 0
fi
_bt_setup_deps "$@"
_bt_rc=$?
unset -f _bt_setup_deps
return $_bt_rc  # the status of the `.` command
