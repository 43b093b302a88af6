#!/usr/bin/env bash
# Builds the supervisor for the ARM64 MicroVM image (Amazon Linux 2023) from this repository with
# Debian's packages: g++-aarch64-linux-gnu and the arm64 multiarch -dev packages of mvr's
# libraries. Usage: scripts/build-supervisor-arm64.sh [BUILD_DIR]   (default build-arm64)
#
# Output: BUILD_DIR/supervisor-bundle/, self-contained: `mvr` (a /bin/sh launcher), lib/mvr.bin
# (the ARM64 executable, built with -DMVR_SUPERVISOR_ONLY=ON: only `version` and `supervisor`),
# and every shared library it needs INCLUDING Debian's glibc and its loader, which the launcher
# runs explicitly. AL2023 ships glibc 2.34 and Debian 12 builds against 2.36, so the bundle never
# uses the image's own libc. Copy the directory into the image (e.g. /opt/mvr) and run
# /opt/mvr/mvr supervisor ...
#
# Also BUILD_DIR/guest-bundle/, the same layout around `mvr-guest` (the supervisor plus the
# stand-in runner, `mvr emulate runner`): what `mvr emulate microvms --vm qemu --vm-arch arm64`
# puts in its ARM64 guests (--vm-guest-bundle). Never part of an image.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-arm64}"
bundle="$dir/supervisor-bundle"
arm64_dev=(libssl-dev:arm64 libcurl4-openssl-dev:arm64 libfmt-dev:arm64
           zlib1g-dev:arm64)

need_install=()
command -v aarch64-linux-gnu-g++ >/dev/null || need_install+=(g++-aarch64-linux-gnu)
for pkg in "${arm64_dev[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
    need_install+=("$pkg")
done
if [[ ${#need_install[@]} -gt 0 ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "build-supervisor-arm64: run as root once to install: ${need_install[*]}" >&2
    exit 1
  fi
  echo "build-supervisor-arm64: installing ${need_install[*]}"
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_install[@]}" >/dev/null
fi

cmake -S . -B "$dir" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DMVR_SUPERVISOR_ONLY=ON -DMVR_BUILD_TESTS=OFF \
  -DMVR_BUILD_BENCH=OFF >/dev/null
ninja -C "$dir" -j "${MVR_JOBS:-2}" mvr mvr-guest

search=(/usr/lib/aarch64-linux-gnu /lib/aarch64-linux-gnu /usr/aarch64-linux-gnu/lib)
find_lib() {
  local name="$1" d
  for d in "${search[@]}"; do
    if [[ -e "$d/$name" ]]; then
      echo "$d/$name"
      return 0
    fi
  done
  return 1
}
# Copies the NEEDED closure of $2 into the bundle $1.
copy_needed() {
  local out="$1" file="$2" lib path
  while read -r lib; do
    [[ -e "$out/lib/$lib" ]] && continue
    path="$(find_lib "$lib")" || { echo "build-supervisor-arm64: cannot find $lib" >&2; exit 1; }
    cp -L "$path" "$out/lib/$lib"
    copy_needed "$out" "$out/lib/$lib"
  done < <(aarch64-linux-gnu-readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
}
# make_bundle DIR BINARY: DIR/lib/mvr.bin (stripped), its libraries, the loader and the launcher.
make_bundle() {
  local out="$1" binary="$2"
  rm -rf "$out"
  mkdir -p "$out/lib"
  cp "$binary" "$out/lib/mvr.bin"
  aarch64-linux-gnu-strip "$out/lib/mvr.bin"
  copy_needed "$out" "$out/lib/mvr.bin"
  cp -L "$(find_lib ld-linux-aarch64.so.1)" "$out/lib/ld-linux-aarch64.so.1"
  cat >"$out/mvr" <<'LAUNCHER'
#!/bin/sh
# Runs the bundled ARM64 mvr with the bundled glibc, whatever the image's own libc is.
here="$(dirname "$(readlink -f "$0")")"
exec "$here/lib/ld-linux-aarch64.so.1" --library-path "$here/lib" "$here/lib/mvr.bin" "$@"
LAUNCHER
  chmod 755 "$out/mvr"
  echo "build-supervisor-arm64: $(du -sh "$out" | cut -f1) in $out ($(ls "$out/lib" | wc -l) files)"
}
make_bundle "$bundle" "$dir/src/cli/mvr"
make_bundle "$dir/guest-bundle" "$dir/src/cli/mvr-guest"
