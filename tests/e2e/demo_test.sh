#!/usr/bin/env bash
# Runs `mvr demo` (the runner set) and `mvr demo --action` with their logs kept, then searches every
# output for the secrets they used: the GitHub token (its file), the webhook secret (its file) and
# the JIT configs the emulator issued (their credential fields).
set -euo pipefail
mvr="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Fails unless no file under $1 (but the secret files themselves) nor $2 contains a secret.
check_no_secret() {
  local dir="$1" out="$2" token="" secret file
  for file in "$dir/github-token" "$dir/stack/github-token"; do
    if [ -f "$file" ]; then token="$(cat "$file")"; fi
  done
  if [ -z "$token" ]; then
    echo "FAIL: no GitHub token file under $dir"
    exit 1
  fi
  if grep -rlF --exclude=github-token "$token" "$dir" "$out"; then
    echo "FAIL: the GitHub token appears in the files above"
    exit 1
  fi
  if [ -f "$dir/webhook-secret" ]; then
    secret="$(cat "$dir/webhook-secret")"
    if grep -rlF --exclude=webhook-secret "$secret" "$dir" "$out"; then
      echo "FAIL: the webhook secret appears in the files above"
      exit 1
    fi
  fi
  if grep -rlE "ACTIONS_RUNNER_INPUT_JITCONFIG=|encoded_jit_config\":\"" "$dir" "$out"; then
    echo "FAIL: a JIT config appears in the files above"
    exit 1
  fi
}

run_demo() {
  local name="$1"
  shift
  local out="$work/$name.out"
  # The /run body form of the whole e2e run (MVR_E2E_RUN_BODY), as every other suite.
  if ! "$mvr" demo "$@" --run-body "${MVR_E2E_RUN_BODY:-raw}" --work-dir "$work/$name" \
    >"$out" 2>&1; then
    cat "$out"
    echo "FAIL: mvr demo $* failed"
    exit 1
  fi
  cat "$out"
  check_no_secret "$work/$name" "$out"
  grep -q "demo: OK" "$out"
}

# The runner set: jobs over two classes through mvr serve; every segment in the table.
run_demo set --jobs 6 --report "$work/set/status.html"
# The status page saved at the end: a row per job (and searched for secrets above).
if [ "$(grep -o 'class="job"' "$work/set/status.html" | wc -l)" -ne 6 ]; then
  echo "FAIL: the status page does not show the 6 finished jobs"
  exit 1
fi
for segment in "queued -> VM running" "config delivered -> runner online" \
  "total: queued -> completed"; do
  if ! grep -E "^$segment +[0-9]" "$work/set.out" >/dev/null; then
    echo "FAIL: the table has no figures for '$segment'"
    exit 1
  fi
done
grep -q "jobs completed: 6/6, failed: 0, VMs left: 0, runners left: 0" "$work/set.out"
# The Action: mvr start / mvr stop per job, then the warm pair.
run_demo action --action --jobs 2
echo "PASS: both demos completed, nothing left behind, no secret in any output"
