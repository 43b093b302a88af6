#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine: installs packages, builds and runs ctest.
# Two tiers (docs/testing.md says what each runs, how long it takes, and why a test is where it is):
#
#   scripts/test.sh          the default tier (CI, the README's second command): every unit test,
#                            the core end-to-end flows, the GitHub contract checks over those same
#                            runs' records and a simulation smoke run, in the normal tree (Quick:
#                            -O1 -g1); then the unit tests of the code that parses outside input or
#                            holds state (label asan) in the sanitizer tree (ASan + UBSan, -O0).
#                            Budget: 25 minutes on 2 cores from a clean clone.
#   scripts/test.sh --deep   everything else (label deep): IAM statement ablations, real-VM and
#                            ARM64 tests, the deploy scripts on moto, 100 seeds of every simulation
#                            scenario, then a short fuzzing pass (scripts/fuzz.sh 10).
#
# Each test runs in one tree (cmake/MvrHelpers.cmake). The run ends with the wall time of each
# phase and the 15 slowest tests. MVR_TEST_JOBS sets ctest's parallelism in the normal tree
# (default: twice the cores, since the end-to-end tests mostly wait on their processes).
set -euo pipefail
cd "$(dirname "$0")/.."

tier=default
case "${1:-}" in
  "") ;;
  --deep) tier=deep ;;
  -h | --help)
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "test.sh: unknown argument '$1'; use no argument (the default tier) or --deep" >&2
    exit 2
    ;;
esac

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cores="$(nproc)"
jobs="${MVR_TEST_JOBS:-$((2 * cores))}"
logs="$(mktemp -d "${TMPDIR:-/tmp}/mvr-test-XXXXXX")"
phases=()
start_all=$SECONDS

# Runs one phase, timed: phase NAME COMMAND...
phase() {
  local name="$1" start=$SECONDS status=0
  shift
  echo "== $name"
  "$@" || status=$?
  phases+=("$(printf '%6ds  %s%s' $((SECONDS - start)) "$name" \
    "$([[ $status -eq 0 ]] || echo " (exit $status)")")")
  return $status
}

# ctest in TREE with more arguments; its output is also kept for the summary.
run_ctest() {  # TREE LOG ARGS...
  local tree="$1" log="$2"
  shift 2
  (cd "$tree" && ctest --output-on-failure "$@") 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

# Free space, so that a run that fills its disk says where it went.
disk() { echo "== disk: $(df -h --output=avail . | tail -1 | tr -d ' ') free; $*"; }

summary() {
  local status=$?
  # What follows only reports: nothing in it may change the run's exit status.
  set +e +o pipefail
  echo
  echo "== phases (wall seconds), $tier tier"
  printf '%s\n' "${phases[@]}"
  printf '%6ds  total\n' $((SECONDS - start_all))
  if compgen -G "$logs/ctest-*.log" >/dev/null; then
    echo "== the 15 slowest tests"
    # "  12/345 Test  #67: Name ......   Passed   12.34 sec"
    sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9]+\.[0-9]+) sec$/\2 \1/p' \
      "$logs"/ctest-*.log | sort -rn | awk 'NR <= 15 {printf "%8.1f s  %s\n", $1, $2}'
  fi
  rm -rf "$logs"
  exit $status
}
trap summary EXIT

if [[ $tier == default ]]; then
  phase "setup (packages for the test tier)" bash scripts/setup.sh test
  disk "before the builds"
  phase "build: normal tree (Quick, without the asan and deep tests)" \
    bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Quick -DMVR_BUILD_TESTS=ON \
    "-DMVR_TEST_LABELS_SKIPPED=asan;deep"
  phase "test: normal tree (ctest -j $jobs)" \
    run_ctest build "$logs/ctest-normal.log" -j "$jobs" --timeout 600 -LE "deep|asan"
  disk "trees: $(du -sh build | awk '{print $2 " " $1}')"
  # -O0 (Debug): the sanitizers find the same bugs, and the tree compiles about twice as fast.
  phase "build: sanitizer tree (ASan + UBSan, the asan tests only)" \
    bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DMVR_SANITIZE=ON \
    -DMVR_BUILD_TESTS=ON -DMVR_BUILD_BENCH=OFF
  phase "test: sanitizer tree (ctest -j $cores)" \
    run_ctest build-asan "$logs/ctest-asan.log" -j "$cores" --timeout 900 -L asan
  disk "after the tests"
else
  phase "setup (packages for the deep tier)" bash scripts/setup.sh deep
  phase "build: normal tree (Quick, with the deep tests)" \
    bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Quick -DMVR_BUILD_TESTS=ON \
    "-DMVR_TEST_LABELS_SKIPPED=asan"
  phase "build: ARM64 supervisor bundle (for the arm64 and ARM64-guest tests)" \
    env CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true bash scripts/build-supervisor-arm64.sh build-arm64
  # The real-VM tests each take the vm lock (one QEMU guest set at a time under TCG).
  phase "test: deep tests (ctest -L deep -j $cores)" \
    run_ctest build "$logs/ctest-deep.log" -j "$cores" --timeout 3600 -L deep
  phase "fuzz: every target for 10 s (scripts/fuzz.sh)" bash scripts/fuzz.sh 10
fi
