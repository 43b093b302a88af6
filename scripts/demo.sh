#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: installs packages, builds, runs `mvr demo` on the
# embedded default (no cloud account, no configuration).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build -DMVR_BUILD_TESTS=OFF -DMVR_BUILD_BENCH=OFF
exec build/src/cli/mvr demo "$@"
