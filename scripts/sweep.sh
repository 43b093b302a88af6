#!/usr/bin/env bash
# Runs a long seed sweep of one scenario in chunks, one `mvr simulate` process per chunk, so that a
# sweep of hours can be stopped between chunks and continued where it stopped. Each chunk's whole
# output goes to OUTDIR/SCENARIO-FIRST.log and one line to OUTDIR/summary.log; the sweep stops at
# the first chunk that fails (its log has the seed and the trace), or when the file
# OUTDIR/stop-SCENARIO exists at the start of a chunk.
# Usage: scripts/sweep.sh SCENARIO FIRST LAST [CHUNK] [OUTDIR]
#   e.g. scripts/sweep.sh pool-target 401 1000 25 sweeps
# MVR (default build/src/cli/mvr) is the binary. Copy it elsewhere first when you rebuild during a
# sweep: each chunk starts the file anew. One process runs one seed at a time (--threads 1): run
# one sweep per core. When Debian's libtcmalloc-minimal4 is installed (scripts/setup.sh installs
# it) each chunk runs with it preloaded: the simulation allocates and frees small strings and maps
# at every step, and with tcmalloc a seed takes about 30% less CPU time than with glibc's malloc,
# with the same trace hashes (docs/simulation.md, "Speed").
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 3 ]] || { echo "usage: scripts/sweep.sh SCENARIO FIRST LAST [CHUNK] [OUTDIR]" >&2; exit 2; }
scenario="$1" first="$2" last="$3" chunk="${4:-25}" out="${5:-sweeps}"
mvr="${MVR:-build/src/cli/mvr}"
for n in "$first" "$last" "$chunk"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "sweep: '$n' is not a positive whole number" >&2; exit 2; }
done
((first <= last)) || { echo "sweep: FIRST ($first) is after LAST ($last)" >&2; exit 2; }
[[ -x "$mvr" ]] || { echo "sweep: no mvr binary at $mvr (build it, or set MVR)" >&2; exit 2; }
mkdir -p "$out"
preload="$(ldconfig -p | sed -n 's/^\s*libtcmalloc_minimal\.so\.4 (.*) => //p' | head -1)"

seed="$first"
while ((seed <= last)); do
  if [[ -e "$out/stop-$scenario" ]]; then
    echo "$(date -u +%FT%TZ) $scenario stopped before seed $seed" | tee -a "$out/summary.log"
    exit 0
  fi
  end=$((seed + chunk - 1))
  ((end > last)) && end="$last"
  log="$out/$scenario-$seed.log"
  started="$(date +%s)"
  rc=0
  LD_PRELOAD="$preload" "$mvr" simulate --scenario "$scenario" --seeds "$seed..$end" --threads 1 \
    >"$log" 2>&1 || rc=$?
  line="$(grep -m1 "^scenario $scenario:" "$log" || true)"
  echo "$(date -u +%FT%TZ) $scenario $seed..$end exit $rc in $(($(date +%s) - started)) s: $line" |
    tee -a "$out/summary.log"
  if ((rc != 0)); then
    echo "sweep: $scenario failed in seeds $seed..$end: see $log" >&2
    exit 1
  fi
  seed=$((end + 1))
done
