#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: installs the packages the demo needs (and only
# those: `scripts/setup.sh demo`), builds the `mvr` binary alone (no tests, no benchmarks, the
# Quick build type), runs `mvr demo` on the embedded default (no cloud account, no configuration).
# The tree is build-demo/, not build/: CMake keeps a tree's options in its cache, so a demo build
# in build/ (tests and benchmarks off) would leave scripts/test.sh's tree without benchmarks and
# reconfigure it back and forth whenever the two alternate.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
MVR_TARGETS=mvr bash scripts/build.sh build-demo -DMVR_BUILD_TESTS=OFF -DMVR_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=Quick
exec build-demo/src/cli/mvr demo "$@"
