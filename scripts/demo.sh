#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: installs packages, builds, runs `mvr demo` on the
# embedded default (no cloud account, no configuration).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
MVR_TARGETS=mvr bash scripts/build.sh build
exec build/src/cli/mvr demo "$@"
