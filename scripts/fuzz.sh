#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, build-fuzz/) and runs each for SECONDS with its
# seed corpus and dictionary. Usage: scripts/fuzz.sh SECONDS [TARGET...]   (default: every target)
# Prints per target: executions, executions per second, coverage (cov/ft) and any crash with its
# reproducer; exits 1 when a target crashed (130 when interrupted by SIGINT without a crash). The
# corpus each run grows is kept in build-fuzz/corpus/<target>/ (the committed seeds in
# fuzz/corpus/ are only read).
# MVR_FUZZ_DIR overrides the build tree; MVR_FUZZ_SKIP_BUILD=1 runs the targets already built;
# MVR_FUZZ_RUNS=N also stops each target after N executions. See docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}"
shift
dir="${MVR_FUZZ_DIR:-build-fuzz}"
if [[ $# -gt 0 ]]; then
  targets=("$@")
else
  targets=()
  for f in fuzz/*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
for t in "${targets[@]}"; do
  [[ -f "fuzz/$t.cpp" ]] || { echo "fuzz: no target '$t' (fuzz/$t.cpp)" >&2; exit 2; }
  [[ -d "fuzz/corpus/$t" ]] || { echo "fuzz: target '$t' has no seeds (fuzz/corpus/$t/)" >&2; exit 2; }
done

if [[ "${MVR_FUZZ_SKIP_BUILD:-0}" != 1 ]]; then
  bash scripts/setup.sh deep  # clang and its fuzzer runtimes (packages.d/deep-fuzz.txt)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
  # -O1 and line tables only: reports keep file:line, and the tree compiles much faster than -g.
  flags="-O1 -gline-tables-only"
  CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DMVR_FUZZ=ON -DMVR_BUILD_TESTS=OFF \
    -DMVR_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$flags" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$flags" >/dev/null
  ninja -C "$dir" -j "$(nproc)" "${targets[@]/#/fuzz_}"
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
crashed=0
interrupted=0
summary=()
for t in "${targets[@]}"; do
  corpus="$dir/corpus/$t"
  artifacts="$dir/artifacts/$t"
  log="$dir/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384
        -print_final_stats=1 -artifact_prefix="$artifacts/")
  [[ -f "fuzz/dict/$t.dict" ]] && args+=(-dict="fuzz/dict/$t.dict")
  [[ -n "${MVR_FUZZ_RUNS:-}" ]] && args+=(-runs="$MVR_FUZZ_RUNS")
  echo "== fuzz $t (${seconds}s)"
  status=0
  "$dir/fuzz/fuzz_$t" "${args[@]}" "$corpus" "fuzz/corpus/$t" >"$log" 2>&1 || status=$?
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  cov="$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)"
  line="$(printf '%-22s execs %-10s exec/s %-7s %s' "$t" "${execs:-?}" "${rate:-?}" \
    "${cov:-cov: ?}")"
  if [[ $status -ne 0 ]] && grep -q 'libFuzzer: run interrupted' "$log"; then
    # SIGINT (Ctrl-C, or `kill -INT` to stop a long run): the counts above hold, nothing crashed.
    interrupted=1
    line+="  interrupted (exit $status), not a crash; log: $log"
  elif [[ $status -ne 0 ]]; then
    crashed=1
    reproducer="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
    line+="  CRASH (exit $status) reproducer: ${reproducer:-none written} log: $log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 || true
  fi
  echo "$line"
  summary+=("$line")
done
echo "== fuzz summary"
printf '%s\n' "${summary[@]}"
if [[ $crashed -ne 0 ]]; then
  echo "fuzz: a target crashed; reproduce with $dir/fuzz/fuzz_TARGET REPRODUCER (docs/fuzzing.md)"
  exit 1
fi
if [[ $interrupted -ne 0 ]]; then
  echo "fuzz: interrupted before the time or run limit"
  exit 130
fi
