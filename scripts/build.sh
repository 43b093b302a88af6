#!/usr/bin/env bash
# Configures and builds one build tree. Usage: scripts/build.sh [DIR] [extra cmake args...]
# MVR_TARGETS="mvr ..." builds only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
# Share compiled objects between checkouts (CI builds a fresh clone in another folder).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
shift || true
cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
# shellcheck disable=SC2086
ninja -C "$dir" -j "$(nproc)" ${MVR_TARGETS:-}
