#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs packages, builds the normal and
# the sanitizer (ASan + UBSan) trees and runs ctest in both. Fuzzing is separate (scripts/fuzz.sh;
# CI runs it as a job of its own).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
jobs="$(nproc)"
# Free space before each phase, so a run that fills its disk says where it went.
disk() { echo "== disk: $(df -h --output=avail . | tail -1 | tr -d ' ') free; $*"; }

disk "before the builds"
echo "== build (RelWithDebInfo)"
bash scripts/build.sh build -DMVR_BUILD_TESTS=ON
echo "== build (ARM64 supervisor bundle, for the qemu test)"
CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true bash scripts/build-supervisor-arm64.sh build-arm64
disk "trees: $(du -sh build build-arm64 2>/dev/null | awk '{print $2 " " $1}' | paste -sd, -)"
echo "== test (RelWithDebInfo)"
(cd build && ctest -j "$jobs" --output-on-failure --timeout 600)

disk "after the tests"
echo "== build (ASan + UBSan)"
# -O0 (Debug): the sanitizers find the same bugs, and the tree compiles about twice as fast.
bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DMVR_SANITIZE=ON -DMVR_BUILD_TESTS=ON \
  -DMVR_BUILD_BENCH=OFF
disk "trees: $(du -sh build-asan | awk '{print $2 " " $1}')"
echo "== test (ASan + UBSan)"
# Unit, moto and process tests run under the sanitizers; the end-to-end runs (label e2e) drive the
# same code through whole emulated stacks and ran above, so they are left out here for time.
(cd build-asan && ctest -j "$jobs" --output-on-failure --timeout 900 -LE "e2e|no_sanitizer")

