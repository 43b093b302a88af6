#!/usr/bin/env bash
# Configures and builds one build tree.
#   scripts/build.sh [DIR] [extra cmake args...]   (default DIR: build)
#   scripts/build.sh --dev [extra cmake args...]   a developer's tree, build-dev/: the Quick build
#       type (-O1 -g1) with every test, so that an edit to one .cpp of a library recompiles that
#       library's one file at -O1 and relinks: 27 s for src/runnerset and `mvr` on 2 cores
#       (docs/testing.md, "One edit, one minute"). -DMVR_UNITY_BUILD=OFF compiles one object
#       per file instead, for a smaller rebuild after a slower first build.
# MVR_TARGETS="mvr ..." builds only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
if [[ "$dir" == --dev ]]; then
  dir=build-dev
  set -- -DCMAKE_BUILD_TYPE=Quick -DMVR_BUILD_TESTS=ON "$@"
fi
# Share compiled objects between checkouts (CI builds a fresh clone in another folder).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
# shellcheck disable=SC2086
ninja -C "$dir" -j "$(nproc)" ${MVR_TARGETS:-}
