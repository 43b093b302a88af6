#!/usr/bin/env bash
# Runs `mvr demo` (the runner set) and `mvr demo --action` with their logs kept, then searches every
# output for the secrets they used: the GitHub token (its file), the webhook secret (its file) and
# the JIT configs the emulator issued (their credential fields).
# With `--vm qemu` after the binary, every demo runs on QEMU guests (`mvr emulate microvms --vm
# qemu`): fewer jobs, plus a run with warm and hot pools; exit 77 (skipped) where QEMU or the guest
# kernel is missing.
set -euo pipefail
mvr="$1"
shift
extra=("$@")
vm=process
if [ "${extra[*]:-}" = "--vm qemu" ]; then
  vm=qemu
  kernel="${MVR_VM_KERNEL_DIR:-/var/cache/mvr/vm-kernel}"
  if ! command -v qemu-system-x86_64 >/dev/null || ! command -v qemu-img >/dev/null ||
    [ ! -f "$kernel/vmlinuz" ]; then
    echo "SKIP: qemu-system-x86_64, qemu-img or the guest kernel ($kernel, scripts/fetch-vm-kernel.sh) is missing"
    exit 77
  fi
fi
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
  if ! "$mvr" demo "$@" "${extra[@]}" --run-body "${MVR_E2E_RUN_BODY:-raw}" \
    --work-dir "$work/$name" >"$out" 2>&1; then
    cat "$out"
    echo "FAIL: mvr demo $* failed"
    exit 1
  fi
  cat "$out"
  check_no_secret "$work/$name" "$out"
  grep -q "demo: OK" "$out"
}

if [ "$vm" = qemu ]; then
  # On real VMs: three jobs on VMs restored from each class's snapshot; then mvr-small's warm and
  # hot members, suspended and resumed for real (their runners reconnect after the resume).
  run_demo set --jobs 3
  grep -q "jobs completed: 3/3, failed: 0, VMs left: 0, runners left: 0" "$work/set.out"
  run_demo pools --jobs 3 --warm-pool 1 --hot-pool 2 --runner-offline-after-seconds 5
  grep -q "jobs completed: 3/3, failed: 0, VMs left: 0, runners left: 0" "$work/pools.out"
  grep -q "mvr-small kept 1 warm and 2 hot suspended VMs" "$work/pools.out"
  run_demo action --action --jobs 2
  echo "PASS: the demos completed on QEMU guests, nothing left behind, no secret in any output"
  exit 0
fi
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
