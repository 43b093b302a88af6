#!/usr/bin/env bash
# Runs `mvr demo` with its logs kept, then searches every output for the secrets it used: the
# GitHub token (its file) and the JIT configs the emulator issued (their credential fields).
set -euo pipefail
mvr="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out="$work/demo.out"
if ! "$mvr" demo --jobs 2 --work-dir "$work/demo" >"$out" 2>&1; then
  cat "$out"
  echo "FAIL: mvr demo failed"
  exit 1
fi
cat "$out"
token="$(cat "$work/demo/github-token")"
# Every file the demo produced except the token file itself: step logs, outputs, emulator and
# guest logs.
if grep -rlF --exclude=github-token "$token" "$work/demo" "$out"; then
  echo "FAIL: the GitHub token appears in the files above"
  exit 1
fi
if grep -rlE "ACTIONS_RUNNER_INPUT_JITCONFIG=|encoded_jit_config\":\"" "$work/demo" "$out"; then
  echo "FAIL: a JIT config appears in the files above"
  exit 1
fi
grep -q "demo: OK" "$out"
echo "PASS: demo completed, nothing left behind, no secret in any output"
