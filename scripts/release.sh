#!/usr/bin/env bash
# Builds the release files of mvr, reproducibly: the same sources and the same Debian 12 packages
# give the same bytes. Usage: scripts/release.sh OUTDIR
#
# OUTDIR receives, for each architecture (x86_64 and arm64, or MVR_RELEASE_ARCHES):
#   mvr-linux-ARCH.tar.gz  mvr-linux-ARCH/mvr (a /bin/sh launcher) and mvr-linux-ARCH/lib/: the
#                          stripped executable and every shared library it needs, including
#                          Debian's glibc and loader, so it runs on any Linux of that architecture
#                          (no static libcurl exists in Debian: its Kerberos and LDAP have no .a)
# and SHA256SUMS (sha256sum format) and BUILDINFO (toolchain and library versions).
#
# Reproducibility: SOURCE_DATE_EPOCH (default: the last commit's time) dates every archive entry;
# -ffile-prefix-map removes the source and build directories from the binary; the build id is a
# hash of the contents; archives are sorted by name, owned by 0:0 and gzip'ed without a name or
# time. MVR_RELEASE_BUILD_DIR (default build-release) holds the build trees. Verify with
# scripts/release-verify.sh, which builds twice in different directories and compares.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
src="$PWD"
[[ $# -eq 1 ]] || { echo "usage: scripts/release.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out="$(cd "$1" && pwd)"
build_root="${MVR_RELEASE_BUILD_DIR:-build-release}"
mkdir -p "$build_root"
build_root="$(cd "$build_root" && pwd)"
read -r -a arches <<<"${MVR_RELEASE_ARCHES:-x86_64 arm64}"

# The time of the last commit that changed the sources: not release/, so that committing the
# pinned checksums (release/SHA256SUMS) does not change what they describe.
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
  SOURCE_DATE_EPOCH="$(git -C "$src" log -1 --format=%ct -- . ':(exclude)release' 2>/dev/null)" ||
    SOURCE_DATE_EPOCH=""
  [[ -n "$SOURCE_DATE_EPOCH" ]] || {
    echo "release: not a git checkout: set SOURCE_DATE_EPOCH (seconds since 1970)" >&2
    exit 1
  }
fi
export SOURCE_DATE_EPOCH TZ=UTC LC_ALL=C
umask 022
# ccache stays usable, but with absolute paths (no CCACHE_BASEDIR): its relative rewriting would
# hide the source directory from -ffile-prefix-map.
unset CCACHE_BASEDIR

# The arm64 cross toolchain and the arm64 multiarch -dev packages of mvr's libraries. Debian's
# libsimdjson-dev cannot be installed for two architectures at once (installing the arm64 one
# removes the amd64 one), so only its arm64 library is installed and simdjson_config() describes it.
arm64_packages=(g++-aarch64-linux-gnu libssl-dev:arm64 libcurl4-openssl-dev:arm64
                libfmt-dev:arm64 zlib1g-dev:arm64 libsqlite3-dev:arm64 libsimdjson14:arm64
                libboost-context1.74-dev:arm64)
ensure_arm64_packages() {
  local missing=() pkg
  for pkg in "${arm64_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$pkg")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "release: run as root once to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "release: installing ${missing[*]}" >&2
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null
}

# simdjson_config DIR: a CMake package for the arm64 libsimdjson (its headers are /usr/include's).
simdjson_config() {
  local so
  so="$(readlink -f /usr/lib/aarch64-linux-gnu/libsimdjson.so.14)"
  mkdir -p "$1"
  cat >"$1/simdjson-config.cmake" <<EOF
add_library(simdjson::simdjson SHARED IMPORTED)
set_target_properties(simdjson::simdjson PROPERTIES IMPORTED_LOCATION "$so"
                                                    IMPORTED_SONAME libsimdjson.so.14)
EOF
  cat >"$1/simdjson-config-version.cmake" <<'EOF'
set(PACKAGE_VERSION 3.0.1)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
EOF
}

# build ARCH: configures and builds the full mvr for ARCH; prints the executable's path.
build() {
  local arch="$1" dir="$build_root/$1" toolchain=()
  if [[ "$arch" == arm64 ]]; then
    simdjson_config "$dir-simdjson"
    toolchain=(-DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake"
               -Dsimdjson_DIR="$dir-simdjson")
  fi
  local map="-ffile-prefix-map=$src=. -ffile-prefix-map=$dir=build"
  cmake -S "$src" -B "$dir" -G Ninja "${toolchain[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DMVR_BUILD_TESTS=OFF -DMVR_BUILD_BENCH=OFF \
    -DCMAKE_C_FLAGS="$map" -DCMAKE_CXX_FLAGS="$map" \
    -DCMAKE_EXE_LINKER_FLAGS="-Wl,--build-id=sha1" >/dev/null
  ninja -C "$dir" -j "${MVR_JOBS:-2}" mvr >&2
  echo "$dir/src/cli/mvr"
}

# bundle ARCH EXECUTABLE STAGE: the executable, its NEEDED closure, the loader and the launcher.
bundle() {
  local arch="$1" exe="$2" stage="$3" triple loader strip
  case "$arch" in
    x86_64) triple=x86_64-linux-gnu loader=ld-linux-x86-64.so.2 strip=strip ;;
    arm64) triple=aarch64-linux-gnu loader=ld-linux-aarch64.so.1 strip=aarch64-linux-gnu-strip ;;
  esac
  local search=("/usr/lib/$triple" "/lib/$triple" "/usr/$triple/lib")
  rm -rf "$stage"
  mkdir -p "$stage/lib"
  install -m 0755 "$exe" "$stage/lib/mvr.bin"
  "$strip" --strip-all "$stage/lib/mvr.bin"
  find_lib() {
    local d
    for d in "${search[@]}"; do
      [[ -e "$d/$1" ]] && { echo "$d/$1"; return 0; }
    done
    return 1
  }
  local -A seen=()
  local queue=("$stage/lib/mvr.bin") file lib path
  while [[ ${#queue[@]} -gt 0 ]]; do
    file="${queue[0]}"
    queue=("${queue[@]:1}")
    while read -r lib; do
      [[ -n "${seen[$lib]:-}" ]] && continue
      seen[$lib]=1
      path="$(find_lib "$lib")" || { echo "release: $arch: cannot find $lib" >&2; exit 1; }
      install -m 0644 "$(readlink -f "$path")" "$stage/lib/$lib"
      queue+=("$stage/lib/$lib")
    done < <(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)
  done
  path="$(find_lib "$loader")" || { echo "release: $arch: no $loader" >&2; exit 1; }
  install -m 0755 "$(readlink -f "$path")" "$stage/lib/$loader"
  cat >"$stage/mvr" <<LAUNCHER
#!/bin/sh
# Runs the bundled mvr ($arch) with the bundled glibc, whatever the system's own libc is.
here="\$(dirname "\$(readlink -f "\$0")")"
exec "\$here/lib/$loader" --library-path "\$here/lib" --argv0 "\$0" "\$here/lib/mvr.bin" "\$@"
LAUNCHER
  chmod 0755 "$stage/mvr"
}

# archive DIR NAME: NAME.tar.gz of DIR/NAME, identical for identical contents.
archive() {
  tar -C "$1" --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
    --mtime="@$SOURCE_DATE_EPOCH" -cf - "$2" | gzip -9 -n >"$out/$2.tar.gz"
}

stage_root="$build_root/stage"
rm -f "$out/SHA256SUMS" "$out/BUILDINFO"
echo "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH" >"$out/BUILDINFO"
for arch in "${arches[@]}"; do
  case "$arch" in
    x86_64) compiler=g++ ;;
    arm64) ensure_arm64_packages; compiler=aarch64-linux-gnu-g++ ;;
    *) echo "release: unknown architecture '$arch' (x86_64 or arm64)" >&2; exit 2 ;;
  esac
  echo "release: building $arch" >&2
  exe="$(build "$arch")"
  name="mvr-linux-$arch"
  bundle "$arch" "$exe" "$stage_root/$name"
  archive "$stage_root" "$name"
  {
    echo "$arch.compiler=$("$compiler" --version | head -1)"
    libs=()
    for lib in "$stage_root/$name/lib"/*; do
      [[ "${lib##*/}" == mvr.bin ]] || libs+=("${lib##*/}")
    done
    echo "$arch.libraries=${libs[*]} "
  } >>"$out/BUILDINFO"
done
(cd "$out" && sha256sum -- *.tar.gz BUILDINFO | sort -k2 >SHA256SUMS)
echo "release: files in $out:" "$out"/* >&2
cat "$out/SHA256SUMS"
