#!/usr/bin/env bash
# The supervisor's footprint measured on the binary that goes into the image: the supervisor-only
# Release build (scripts/build-supervisor-arm64.sh builds the same sources for ARM64), here for
# this machine's architecture. Usage: bench/supervisor-footprint.sh [BUILD_DIR] [-- BENCH ARGS]
#   BUILD_DIR: a configured tree with MVR_BUILD_BENCH=ON (default build), for the bench program.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
[[ $# -gt 0 ]] && shift
[[ "${1:-}" == "--" ]] && shift
sup_build="${MVR_SUPERVISOR_BUILD_DIR:-build-supervisor}"
cmake -S . -B "$sup_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMVR_SUPERVISOR_ONLY=ON \
  -DMVR_BUILD_TESTS=OFF -DMVR_BUILD_BENCH=OFF >/dev/null
ninja -C "$sup_build" -j "${MVR_JOBS:-2}" mvr >/dev/null
strip -o "$sup_build/mvr.stripped" "$sup_build/src/cli/mvr"
ninja -C "$build" -j "${MVR_JOBS:-2}" supervisor_footprint >/dev/null
echo "binary: $sup_build/mvr.stripped ($(stat -c %s "$sup_build/mvr.stripped") bytes), libraries:"
ldd "$sup_build/mvr.stripped" | awk '{print "  " $1}'
"$build/bench/supervisor_footprint" --mvr "$sup_build/mvr.stripped" "$@"
