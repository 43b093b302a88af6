#!/usr/bin/env bash
# Builds the arm64 `mvr-lambda` (the release's cross toolchain and arm64 libraries), packages it
# with `mvr package lambda --arch arm64`, and runs the package test on it under
# qemu-aarch64-static: every library the zip's ELF files name is inside the zip, and the unpacked
# zip answers a webhook event against the local fake Runtime API. The normal suite skips that
# test (it needs this cross build). Usage: scripts/lambda-arm64-check.sh [OUTDIR] (default
# build-lambda-arm64-out); the zip is left there.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build-lambda-arm64-out}"
mkdir -p "$out"
bash scripts/setup.sh deep  # the cross compiler and qemu-aarch64-static
bash scripts/build.sh build -DMVR_BUILD_TESTS=ON
export MVR_RELEASE_BUILD_DIR="${MVR_RELEASE_BUILD_DIR:-build-release}"
MVR_RELEASE_ARCHES=arm64 bash scripts/release.sh "$out/release"
tree="$(cd "$MVR_RELEASE_BUILD_DIR/arm64" && pwd)"
ninja -C "$tree" -j "$(nproc)" mvr-lambda
binary="$tree/src/cli/mvr-lambda"
build/src/cli/mvr package lambda --arch arm64 --binary "$binary" \
  --output "$out/mvr-lambda-arm64.zip"
MVR_LAMBDA_ARM64_BINARY="$binary" build/tests/lambda/lambda_package_test \
  --gtest_filter='PackageTest.Arm64*' 2>&1 | tee "$out/test.log"
if ! grep -q "^\[  PASSED  \] 1 test" "$out/test.log" || grep -q "SKIPPED" "$out/test.log"; then
  echo "lambda-arm64-check: the arm64 package test did not run and pass (see above)" >&2
  exit 1
fi
