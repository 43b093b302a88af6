# shellcheck shell=bash
# Shared by deploy/bootstrap.sh and deploy/teardown.sh (sourced, not run): arguments, the AWS CLI
# call with region and endpoint from the usual settings, and the names of everything a runner set
# owns, derived from its id so that teardown finds exactly what bootstrap made.

AWS="${AWS:-aws}"
deploy_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The runner set's functions: each has a role, a policy file and a log group. The warm-pool
# function is not built yet (its handler reports an init error), so only its role and log group
# exist; LAMBDA_FUNCTIONS are the ones deployed.
FUNCTIONS=(webhook launcher janitor warm-pool)
LAMBDA_FUNCTIONS=(webhook launcher janitor warm-pool)

die() { echo "${0##*/}: $*" >&2; exit 1; }

# aws ARGS...: the CLI with the region, JSON output and, when AWS_ENDPOINT_URL is set, that
# endpoint (Debian's awscli 2.9 does not read the variable itself).
aws_() {
  local endpoint=()
  [[ -n "${AWS_ENDPOINT_URL:-}" ]] && endpoint=(--endpoint-url "$AWS_ENDPOINT_URL")
  "$AWS" "${endpoint[@]}" --region "$region" --output json "$@"
}

# microvms ARGS...: `aws lambda-microvms ARGS` from the service model in models/ (the CLI does not
# ship it; AWS_DATA_PATH adds it). The endpoint is AWS_ENDPOINT_URL_LAMBDA_MICROVMS, else
# AWS_ENDPOINT_URL, else the CLI's default for the region.
microvms() {
  local endpoint=() url="${AWS_ENDPOINT_URL_LAMBDA_MICROVMS:-${AWS_ENDPOINT_URL:-}}"
  [[ -n "$url" ]] && endpoint=(--endpoint-url "$url")
  AWS_DATA_PATH="$(model_dir)${AWS_DATA_PATH:+:$AWS_DATA_PATH}" \
    "$AWS" "${endpoint[@]}" --region "$region" --output json lambda-microvms "$@"
}
model_dir() {
  local dir="$work/models"
  if [[ ! -d "$dir" ]]; then
    mkdir -p "$dir/lambda-microvms/2025-09-09"
    cp "$deploy_dir/../models/lambda-microvms/service-2.json" "$dir/lambda-microvms/2025-09-09/"
    # The model has no paginators; these let the CLI follow nextToken through every page.
    local page='{"input_token":"nextToken","output_token":"nextToken","limit_key":"maxResults","result_key":"items"}'
    printf '{"pagination":{"ListMicrovms":%s,"ListMicrovmImages":%s}}\n' "$page" "$page" \
      >"$dir/lambda-microvms/2025-09-09/paginators-1.json"
  fi
  echo "$dir"
}

# Quietly: whether a read succeeds (used for "does it exist?").
exists() { aws_ "$@" >/dev/null 2>&1; }

# A scratch directory for the run, removed at exit.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Where fetch puts the listings: $work, or the directory of a later round of listings
# (inventory.sh: list_set), so that a fresh listing never mixes with an older one.
listing_dir="$work"

# fetch NAME COMMAND...: starts COMMAND (aws_ or microvms with arguments) in the background, its
# output to $listing_dir/NAME and its exit status to $listing_dir/NAME.rc. The reads a script
# needs are independent, and each CLI process spends about a second starting, so they run side by
# side; `fetched NAME` waits for one.
fetch() {
  local name="$1" dir="$listing_dir"
  shift
  { rc=0
    "$@" >"$dir/$name" 2>"$dir/$name.err" || rc=$?
    echo "$rc" >"$dir/$name.rc"; } &
}
# fetched NAME: waits for fetch NAME; fails (printing the CLI's error) when the read failed.
fetched() {
  local dir="$listing_dir"
  while [[ ! -s "$dir/$1.rc" ]]; do wait -n 2>/dev/null || sleep 0.05; done
  if [[ "$(cat "$dir/$1.rc")" != 0 ]]; then
    sed "s/^/${0##*\/}: /" "$dir/$1.err" >&2
    return 1
  fi
  cat "$dir/$1"
}
# fetched_or_none NAME: as fetched, but a resource that does not exist (ResourceNotFoundException;
# CloudWatch's dashboards say ResourceNotFound) prints nothing and succeeds.
fetched_or_none() {
  fetched "$1" 2>/dev/null && return 0
  grep ResourceNotFound "$listing_dir/$1.err" >/dev/null && return 0
  sed "s/^/${0##*\/}: /" "$listing_dir/$1.err" >&2
  return 1
}
# names NAME JQ: the names a fetched listing holds (one a line), by a jq filter.
names() { fetched "$1" | jq -r "$2"; }
# named NAME LINES...: whether NAME is one of the lines of LINES. Without a pipe into `grep -q`:
# bash's printf writes a line at a time, grep -q exits at the first match, and the next write
# then kills printf (SIGPIPE), which pipefail turned into "not there" (teardown once skipped the
# launcher function that way, a race that loses more often on a loaded machine).
named() {
  local n="$1" line
  shift
  while IFS= read -r line; do
    [[ "$line" == "$n" ]] && return 0
  done <<<"$(printf '%s\n' "$@")"
  return 1
}

# in_parallel FN ITEM...: `FN ITEM` for every item side by side; prints their output in item
# order and fails when one failed (its error is printed too).
in_parallel() {
  local fn="$1" i pids=() failed=0
  shift
  for i in $(seq 0 $(($# - 1))); do
    "$fn" "${@:i+1:1}" >"$work/par.$fn.$i" 2>"$work/par.$fn.$i.err" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed=1
    cat "$work/par.$fn.$i"
    cat "$work/par.$fn.$i.err" >&2
  done
  return "$failed"
}

# step FN: runs FN; `in_parallel step FN1 FN2...` runs independent steps side by side.
step() { "$1"; }

resolve_region() {
  region="${AWS_REGION:-${AWS_DEFAULT_REGION:-}}"
  [[ -n "$region" ]] || region="$("$AWS" configure get region 2>/dev/null || true)"
  [[ -n "$region" ]] || die "no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION)"
}

# set_names ID: every name the runner set uses. An id holds lowercase letters, digits and '-',
# never '_': '_' follows the id in every name derived from it (mvr-ID_<what>, images
# ID_<index>-<8 hex>), so no set's names, patterns or IAM wildcards reach another set whose id
# starts with this one (ci, ci1, ci-gpu). src/runnerset/config/runner_name.h is the same scheme.
set_names() {
  set_id="$1"
  [[ "$set_id" != *[_.A-Z]* ]] || die "--runner-set-id '$set_id': '_', '.' and capitals are no \
longer allowed: '_' ends the id in the set's names (mvr-ID_...), so an id holds lowercase letters, \
digits and '-' only; rename the set (docs/operations.md)"
  [[ "$set_id" =~ ^[a-z][a-z0-9-]{0,19}$ ]] ||
    die "--runner-set-id must be 1-20 characters: a lowercase letter, then letters, digits or '-' (got '$set_id')"
  name_prefix="mvr-${set_id}_"
  table="mvr-$set_id"
  pool_table="${name_prefix}pools"
  queue="${name_prefix}jobs"
  dlq="${name_prefix}jobs-dlq"
  ssm_prefix="/mvr/$set_id"
  action_policy="${name_prefix}action"
  action_pool_policy="${name_prefix}action-pool"
  action_sweep_policy="${name_prefix}action-sweep"
  # The permissions boundary of the set's roles (deploy/iam/runner-set-boundary.json). Teardown
  # keeps it: the deployer may create it but never change or delete it (docs/iam.md).
  boundary_policy="${name_prefix}boundary"
  janitor_rule="${name_prefix}janitor"
  warm_pool_rule="${name_prefix}warm-pool"
  # CloudWatch: the dashboard, and the alarms as mvr-ID.<what>. No id has a '.', so the prefix
  # is the set's alone.
  dashboard="mvr-$set_id"
  alarm_prefix="mvr-$set_id."
  # The set's MicroVM images: <runnerSetId>_<index>-<8 hex>.
  image_pattern="^${set_id}_[0-9]+-[0-9a-f]{8}\$"
}
role_of() { echo "$name_prefix$1"; }
function_of() { echo "$name_prefix$1"; }
log_group_of() { echo "/aws/lambda/$name_prefix$1"; }

# The account and partition of the credentials in use (from fetch caller).
resolve_account() {
  local arn
  arn="$(fetched caller | jq -r .Arn)" ||
    die "cannot read the caller identity (sts get-caller-identity): check the AWS credentials"
  partition="$(cut -d: -f2 <<<"$arn")"
  account="$(cut -d: -f5 <<<"$arn")"
}
