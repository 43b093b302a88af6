#!/usr/bin/env bash
# The GitHub contract tests (docs/contracts-github.md), run by ctest:
#   contract_test.sh run OPERATIONS DELIVERIES BINARY[@GTEST_FILTER]...
#     runs each test binary with the GitHub emulator's traffic record on (MVR_GITHUB_RECORD),
#     then validate.mjs over the record, which must also have seen every operation id in
#     OPERATIONS and every event.action in DELIVERIES (comma-separated). MVR_GITHUB_DESCRIPTION
#     (api.github.com, the default, or ghec) names the description to hold the record to.
#   contract_test.sh check OPERATIONS DELIVERIES BINARY[@GTEST_FILTER]...
#     the same over records the tests already wrote: $MVR_GITHUB_RECORD_DIR holds one record a
#     test, BINARY.SUITE.TEST.PID.jsonl (tests/support/github_record.h); the records of the tests
#     each BINARY@GTEST_FILTER names are validated together. $MVR_TEST_LOG, when set, is the log
#     of those tests' output that must hold none of the records' secrets (ctest's LastTest.log).
#   contract_test.sh selftest
#     feeds validate.mjs known-bad and known-good records and checks its verdicts.
# Exits 77 (ctest's SKIP_RETURN_CODE) when Node.js or the npm packages are missing.
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
VALIDATE="$HERE/validate.mjs"

if ! command -v node >/dev/null; then
  echo "SKIP: node is not installed; the GitHub contract tests need Node.js 18+ (then scripts/setup.sh)"
  exit 77
fi
for pkg in @octokit/openapi @octokit/openapi-webhooks ajv ajv-formats; do
  if [[ ! -f "$HERE/node_modules/$pkg/package.json" ]]; then
    echo "SKIP: npm package $pkg is not installed in tests/contracts/github; run scripts/setup.sh"
    exit 77
  fi
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mvr-github-contracts-XXXXXX")"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

run() {
  local operations="$1" deliveries="$2"
  shift 2
  local record="$WORK/record.jsonl"
  : >"$record"
  : >"$WORK/test.log"
  chmod 600 "$record"  # it holds the emulator's tokens and JIT configs
  for spec in "$@"; do
    local binary="${spec%%@*}" filter="*"
    [[ "$spec" == *@* ]] && filter="${spec#*@}"
    echo "== $(basename "$binary") --gtest_filter=$filter (recording GitHub traffic)"
    # The record stays in the temporary directory; the tests' own output goes to a log shown
    # only when they fail.
    if ! MVR_GITHUB_RECORD="$record" "$binary" --gtest_filter="$filter" >>"$WORK/test.log" 2>&1; then
      tail -n 60 "$WORK/test.log"
      echo "FAIL: $(basename "$binary") failed before its traffic could be checked"
      return 1
    fi
  done
  validate_record "$operations" "$deliveries" "$record" "$WORK/test.log"
}

# Validates RECORD; LOG is the tests' output, which must hold none of the record's secrets.
validate_record() {  # OPERATIONS DELIVERIES RECORD LOG
  local operations="$1" deliveries="$2" record="$3" log="$4"
  # The record holds the JIT configs and tokens the emulator handed out; none may have reached
  # the tests' output (the record is never logged).
  node -e 'const fs=require("fs");
    for (const l of fs.readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean)) {
      const j=JSON.parse(l); if (j.kind!=="rest") continue;
      let b; try { b=JSON.parse(j.response_body); } catch { continue; }
      for (const k of ["encoded_jit_config","token"]) if (typeof b?.[k]==="string") console.log(b[k]); }' \
    "$record" >"$WORK/secrets.txt"
  if [[ -s "$WORK/secrets.txt" ]] && grep -qF -f "$WORK/secrets.txt" "$log"; then
    echo "FAIL: a JIT config or token from the record appears in the tests' output"
    return 1
  fi
  echo "== validate.mjs over $(wc -l <"$record") recorded lines ($(wc -l <"$WORK/secrets.txt") secrets, none in the output)"
  node "$VALIDATE" "$record" --expect-operations "$operations" --expect-deliveries "$deliveries" \
    --description "${MVR_GITHUB_DESCRIPTION:-api.github.com}"
}

# Whether TEST (Suite.Name) passes a gtest filter: POSITIVE[:...][-NEGATIVE[:...]].
filter_matches() {  # TEST FILTER
  local test="$1" filter="$2" positive negative pattern
  positive="${filter%%-*}"
  negative=""
  [[ "$filter" == *-* ]] && negative="${filter#*-}"
  [[ -z "$positive" ]] && positive="*"
  local ok=1
  IFS=: read -ra patterns <<<"$positive"
  for pattern in "${patterns[@]}"; do
    # shellcheck disable=SC2053  # the pattern is a glob on purpose
    [[ "$test" == $pattern ]] && ok=0
  done
  [[ $ok -eq 0 ]] || return 1
  IFS=: read -ra patterns <<<"$negative"
  for pattern in "${patterns[@]}"; do
    # shellcheck disable=SC2053
    [[ -n "$pattern" && "$test" == $pattern ]] && return 1
  done
  return 0
}

check() {
  local operations="$1" deliveries="$2"
  shift 2
  local dir="${MVR_GITHUB_RECORD_DIR:-}"
  if [[ -z "$dir" || ! -d "$dir" ]]; then
    echo "FAIL: no records in '${dir}': run the recording suites first (ctest runs them before" \
      "this check: fixture github_records), or use '$0 run' to run them here"
    return 1
  fi
  local record="$WORK/record.jsonl"
  : >"$record"
  chmod 600 "$record"  # it holds the emulator's tokens and JIT configs
  for spec in "$@"; do
    local binary="${spec%%@*}" filter="*" files=0
    [[ "$spec" == *@* ]] && filter="${spec#*@}"
    for file in "$dir/$binary".*.jsonl; do
      [[ -f "$file" ]] || continue
      local name="${file##*/}"
      name="${name#"$binary".}"
      name="${name%.*.jsonl}"
      filter_matches "$name" "$filter" || continue
      cat "$file" >>"$record"
      files=$((files + 1))
    done
    if [[ $files -eq 0 ]]; then
      echo "FAIL: no record of $binary --gtest_filter=$filter in $dir: did its tests run?"
      return 1
    fi
    echo "== $binary --gtest_filter=$filter: the records of $files tests"
  done
  local log="${MVR_TEST_LOG:-}"
  if [[ -z "$log" || ! -f "$log" ]]; then
    log="$WORK/no-log.txt"
    : >"$log"
    echo "== no test log to search for the records' secrets (MVR_TEST_LOG='${MVR_TEST_LOG:-}')"
  fi
  validate_record "$operations" "$deliveries" "$record" "$log"
}

# A record of one exchange or delivery, as the emulator writes it.
rest_line() {  # METHOD PATH STATUS RESPONSE_BODY [REQUEST_BODY]
  node -e 'const [m,p,s,res,req]=process.argv.slice(1);
    console.log(JSON.stringify({kind:"rest",method:m,path:p,query:"",status:Number(s),
      request_body:req??"",response_body:res}))' "$@"
}

# Expects validate.mjs to exit with WANT over RECORD and, if given, to print PATTERN.
expect() {  # NAME WANT RECORD [PATTERN [VALIDATE-FLAGS...]]
  local name="$1" want="$2" record="$3" pattern="${4:-}"
  local out status
  out="$(node "$VALIDATE" "$record" "${@:5}" 2>&1)"
  status=$?
  if [[ $status -ne $want ]] || [[ -n "$pattern" && "$out" != *"$pattern"* ]]; then
    echo "FAIL: $name: exit $status (want $want)${pattern:+, output should contain: $pattern}"
    echo "$out"
    return 1
  fi
  echo "ok: $name"
}

selftest() {
  local failed=0
  # A good delivery and answer, taken from the emulator itself, are the base for broken ones.
  local good="$HERE/testdata/good_record.jsonl"
  expect "the emulator's own sample record is valid" 0 "$good" || failed=1

  node -e 'const fs=require("fs");
    for (const l of fs.readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean)) {
      const j=JSON.parse(l); if (j.kind!=="delivery") continue;
      const b=JSON.parse(j.body); delete b.repository.full_name; j.body=JSON.stringify(b);
      console.log(JSON.stringify(j)); break; }' "$good" >"$WORK/no_full_name.jsonl"
  expect "a delivery whose repository lacks full_name fails" 1 "$WORK/no_full_name.jsonl" \
    "/repository must have required property 'full_name'" || failed=1

  node -e 'const fs=require("fs");
    for (const l of fs.readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean)) {
      const j=JSON.parse(l); if (j.kind!=="rest"||!j.path.endsWith("/actions/runs")) continue;
      const b=JSON.parse(j.response_body); b.workflow_runs[0].status=7; j.response_body=JSON.stringify(b);
      console.log(JSON.stringify(j)); break; }' "$good" >"$WORK/bad_run.jsonl"
  expect "a workflow run whose status is a number fails" 1 "$WORK/bad_run.jsonl" \
    "/workflow_runs/0/status must be string" || failed=1

  rest_line POST /repos/o/r/actions/runners/generate-jitconfig 201 '{}' \
    '{"name":"x","runner_group_id":"one","labels":["a"]}' >"$WORK/bad_request.jsonl"
  expect "a JIT request whose runner_group_id is a string fails" 1 "$WORK/bad_request.jsonl" \
    "request: /runner_group_id must be integer" || failed=1

  rest_line GET /repos/o/r/actions/runs 418 '{"message":"teapot"}' >"$WORK/undocumented.jsonl"
  expect "an undocumented status fails" 1 "$WORK/undocumented.jsonl" \
    "status not documented for this operation" || failed=1

  rest_line GET /repos/o/r/actions/runs 403 \
    '{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}' \
    >"$WORK/forbidden.jsonl"
  expect "a 403 that is not a rate limit is not allow-listed" 1 "$WORK/forbidden.jsonl" \
    "status not documented for this operation" || failed=1

  rest_line DELETE /repos/o/r/actions/runners/5 404 \
    '{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}' >"$WORK/gone.jsonl"
  expect "the allow-listed 404 of a runner already gone passes" 0 "$WORK/gone.jsonl" || failed=1

  rest_line DELETE /repos/o/r/actions/runners/5 404 '{"error":"gone"}' >"$WORK/gone_bad.jsonl"
  expect "an allow-listed 404 still needs GitHub's error body" 1 "$WORK/gone_bad.jsonl" \
    "must have required property 'message'" || failed=1

  # An enterprise's runner: GitHub.com's description has no such endpoint, GHEC's does.
  rest_line POST /enterprises/e/actions/runners/generate-jitconfig 201 \
    '{"runner":{"id":1,"name":"x","os":"Linux","status":"offline","busy":false,"labels":[]},"encoded_jit_config":"abc"}' \
    '{"name":"x","runner_group_id":1,"labels":["a"]}' >"$WORK/enterprise.jsonl"
  expect "an enterprise's JIT config is not GitHub.com's" 1 "$WORK/enterprise.jsonl" \
    "no such operation in GitHub's REST description" || failed=1
  expect "an enterprise's JIT config is GHEC's" 0 "$WORK/enterprise.jsonl" "" \
    --description ghec || failed=1

  rest_line GET /repos/o/r/no/such/endpoint 200 '{}' >"$WORK/unknown.jsonl"
  expect "a path GitHub does not serve fails" 1 "$WORK/unknown.jsonl" \
    "no such operation in GitHub's REST description" || failed=1

  printf '%s\n' '{"kind":"rest","method":"GET","path":"/_emulator/jobs","query":"","status":200,"request_body":"","response_body":"[]"}' \
    >"$WORK/exempt.jsonl"
  expect "the emulator's own endpoints are exempt" 0 "$WORK/exempt.jsonl" \
    "emulator-only exchanges skipped: 1" || failed=1
  return $failed
}

case "${1:-}" in
  run)
    [[ $# -ge 4 ]] || { echo "usage: $0 run OPERATIONS DELIVERIES BINARY[@FILTER]..." >&2; exit 2; }
    shift
    run "$@"
    ;;
  check)
    [[ $# -ge 4 ]] || { echo "usage: $0 check OPERATIONS DELIVERIES BINARY[@FILTER]..." >&2; exit 2; }
    shift
    check "$@"
    ;;
  selftest) selftest ;;
  *)
    echo "usage: $0 run|check OPERATIONS DELIVERIES BINARY[@FILTER]... | $0 selftest" >&2
    exit 2
    ;;
esac
