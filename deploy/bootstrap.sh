#!/usr/bin/env bash
# Creates the AWS resources of a runner set with the AWS CLI, idempotently: a second run finds
# everything and changes nothing. Prints one line per resource: create, update or exists.
#
#   deploy/bootstrap.sh --runner-set-id ID [--config FILE [--package ZIP] [--arch x86_64|arm64]]
#                       [--execution-role NAME] [--action-image NAME] [--github-token-file F]
#                       [--github-app-key-file F] [--log-retention-days N] [--alarm-topic ARN]
#
# Region and endpoint come from the usual AWS settings (AWS_REGION, AWS_ENDPOINT_URL, profiles).
# What it makes (docs/operations.md): the state table and the Action's pool table (TTL on `ttl`),
# the job queue with its dead-letter queue and redrive, one log group and one IAM role per
# function with its policy from deploy/iam/, the Action users' managed policies, SSM SecureString
# parameters for secrets (the webhook secret is generated and never printed) and, with --config
# (the runner set's JSON, as for `mvr serve`), the Lambda functions: the webhook with its Function
# URL, the launcher on the job queue, the janitor and the warm-pool sweeper each on an
# EventBridge schedule (the sweeper's enabled while a class has a warm pool), and a CloudWatch
# dashboard and alarms over their metrics, notifying --alarm-topic (an SNS topic) when given. The
# zip is --package or `mvr package lambda --arch ARCH` (MVR=/path/to/mvr picks the binary).
set -euo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=deploy/monitoring.sh
source "$deploy_dir/monitoring.sh"

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
set_id="" execution_role="" action_image="" token_file="" app_key_file="" retention=30
config_file="" package="" arch=x86_64 alarm_topic=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runner-set-id) set_id="${2:-}"; shift 2 ;;
    --config) config_file="${2:-}"; shift 2 ;;
    --package) package="${2:-}"; shift 2 ;;
    --arch) arch="${2:-}"; shift 2 ;;
    --execution-role) execution_role="${2:-}"; shift 2 ;;
    --action-image) action_image="${2:-}"; shift 2 ;;
    --github-token-file) token_file="${2:-}"; shift 2 ;;
    --github-app-key-file) app_key_file="${2:-}"; shift 2 ;;
    --log-retention-days) retention="${2:-}"; shift 2 ;;
    --alarm-topic) alarm_topic="${2:-}"; shift 2 ;;
    -h | --help) usage ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done
[[ -n "$set_id" ]] || usage
set_names "$set_id"
for f in "$token_file" "$app_key_file" "$config_file" "$package"; do
  [[ -z "$f" || -r "$f" ]] || die "cannot read $f"
done
[[ "$arch" == x86_64 || "$arch" == arm64 ]] || die "--arch must be x86_64 or arm64 (got '$arch')"
[[ -z "$package" || -n "$config_file" ]] || die "--package needs --config (the functions' configuration)"
[[ -z "$alarm_topic" || "$alarm_topic" =~ ^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$ ]] ||
  die "--alarm-topic must be an SNS topic's ARN, arn:PARTITION:sns:REGION:ACCOUNT:NAME (e.g. arn:aws:sns:us-east-1:123456789012:mvr-alarms; got '$alarm_topic')"
[[ -z "$alarm_topic" || -n "$config_file" ]] || die "--alarm-topic needs --config (the alarms watch the functions)"
command -v jq >/dev/null || die "needs jq (Debian: apt-get install jq)"
if [[ -n "$config_file" ]]; then
  jq -e 'type == "object"' "$config_file" >/dev/null 2>&1 || die "$config_file: not a JSON object"
fi
resolve_region
tags_kv=("Key=mvr:runner-set,Value=$set_id")
say() { printf '%-7s %-15s %s\n' "$1" "$2" "$3"; }

# Everything bootstrap compares against is read up front, side by side (lib.sh: fetch).
fetch caller aws_ sts get-caller-identity
fetch tables aws_ dynamodb list-tables
fetch ttl-"$table" aws_ dynamodb describe-time-to-live --table-name "$table"
fetch ttl-"$pool_table" aws_ dynamodb describe-time-to-live --table-name "$pool_table"
fetch queues aws_ sqs list-queues --queue-name-prefix "$queue"
fetch logs aws_ logs describe-log-groups --log-group-name-prefix "/aws/lambda/${name_prefix}"
fetch iam aws_ iam get-account-authorization-details --filter Role LocalManagedPolicy --query \
  "{roles: RoleDetailList[?starts_with(RoleName, '${name_prefix}')], policies: Policies[?contains(Arn, ':policy/${name_prefix}')]}"
fetch params aws_ ssm get-parameters --names "$ssm_prefix/webhook-secret" \
  "$ssm_prefix/github-token" "$ssm_prefix/github-app-private-key" --query 'Parameters[].Name'
if [[ -n "$config_file" ]]; then
  fetch functions aws_ lambda list-functions \
    --query "Functions[?starts_with(FunctionName, '${name_prefix}')]"
  fetch url aws_ lambda get-function-url-config --function-name "$(function_of webhook)"
  fetch policy-webhook aws_ lambda get-policy --function-name "$(function_of webhook)"
  fetch policy-janitor aws_ lambda get-policy --function-name "$(function_of janitor)"
  fetch policy-warm-pool aws_ lambda get-policy --function-name "$(function_of warm-pool)"
  fetch mappings aws_ lambda list-event-source-mappings --function-name "$(function_of launcher)"
  fetch concurrency-webhook aws_ lambda get-function-concurrency --function-name "$(function_of webhook)"
  fetch concurrency-launcher aws_ lambda get-function-concurrency \
    --function-name "$(function_of launcher)"
  fetch rules aws_ events list-rules --name-prefix "${name_prefix}"
  fetch targets-janitor aws_ events list-targets-by-rule --rule "$janitor_rule"
  fetch targets-warm-pool aws_ events list-targets-by-rule --rule "$warm_pool_rule"
  fetch alarms aws_ cloudwatch describe-alarms --alarm-name-prefix "$alarm_prefix"
  fetch dashboard aws_ cloudwatch get-dashboard --dashboard-name "$dashboard"
  if [[ -z "$package" ]]; then
    package="$work/mvr-lambda-$arch.zip"
    "${MVR:-mvr}" package lambda --arch "$arch" --output "$package" >/dev/null ||
      die "cannot build the Lambda package with '${MVR:-mvr} package lambda' (give --package ZIP)"
  fi
fi
resolve_account
# Every listing must have worked before anything is created (a function or rule that does not
# exist yet is fine): a read that was denied would look like "nothing there", and bootstrap would
# try to create what may exist, failing half-way with an error about something else. (A table's
# TTL is read only when the table is listed; re-enabling it is harmless.)
for listing in tables queues logs iam params ${config_file:+functions rules alarms}; do
  fetched "$listing" >/dev/null || die "cannot read the account ($listing); nothing was changed"
done
for listing in ${config_file:+url policy-webhook policy-janitor policy-warm-pool mappings \
  targets-janitor targets-warm-pool dashboard concurrency-webhook concurrency-launcher}; do
  fetched_or_none "$listing" >/dev/null || die "cannot read the account ($listing); nothing was changed"
done
action_image="${action_image:-${set_id}_*}"
boundary_arn="arn:$partition:iam::$account:policy/$boundary_policy"

# render FILE TABLE: a policy of deploy/iam/ with its placeholders filled (compact, sorted keys);
# without an execution role, the statement that passes one is left out.
render() {
  local doc
  doc="$(jq -cS --arg role "$execution_role" 'if $role == "" then .Statement |= map(select(.Sid !=
    "PassExecutionRoleToMicrovms")) else . end' "$deploy_dir/iam/$1")"
  doc="${doc//\{\{partition\}\}/$partition}" doc="${doc//\{\{region\}\}/$region}"
  doc="${doc//\{\{account\}\}/$account}" doc="${doc//\{\{image\}\}/$action_image}"
  doc="${doc//\{\{table\}\}/$2}" doc="${doc//\{\{queue\}\}/$queue}"
  doc="${doc//\{\{execution_role\}\}/$execution_role}" doc="${doc//\{\{runner_set\}\}/$set_id}"
  echo "$doc"
}
# A policy document as IAM returns it (an object, or URL-decoded text), compact with sorted keys.
normalize='if type == "string" then fromjson else . end'

ensure_table() {
  local name="$1" ttl
  if fetched tables | jq -e --arg n "$name" '.TableNames | index($n)' >/dev/null; then
    say exists table "$name"
    ttl="$(fetched_or_none "ttl-$name" |
      jq -r '.TimeToLiveDescription | "\(.TimeToLiveStatus) \(.AttributeName)"')"
  else
    aws_ dynamodb create-table --table-name "$name" --billing-mode PAY_PER_REQUEST \
      --attribute-definitions AttributeName=pk,AttributeType=S AttributeName=sk,AttributeType=S \
      --key-schema AttributeName=pk,KeyType=HASH AttributeName=sk,KeyType=RANGE \
      --tags "${tags_kv[@]}" >/dev/null
    aws_ dynamodb wait table-exists --table-name "$name"
    say create table "$name"
    ttl=""
  fi
  if [[ "$ttl" =~ ^(ENABLED|ENABLING)\ ttl$ ]]; then
    say exists ttl "$name.ttl"
  else
    aws_ dynamodb update-time-to-live --table-name "$name" \
      --time-to-live-specification Enabled=true,AttributeName=ttl >/dev/null
    say create ttl "$name.ttl"
  fi
}

# ensure_queue NAME ATTRIBUTES_JSON: the queue, created with those attributes; its URL in
# $work/url.NAME.
ensure_queue() {
  local url
  url="$(fetched queues | jq -r --arg n "/$1" '.QueueUrls[]? | select(endswith($n))')"
  if [[ -n "$url" ]]; then
    say exists queue "$1"
  else
    url="$(aws_ sqs create-queue --queue-name "$1" --attributes "$2" \
      --tags "mvr:runner-set=$set_id" --query QueueUrl --output text)"
    say create queue "$1"
  fi
  echo "$url" >"$work/url.$1"
}

ensure_log_group() {
  local name found
  name="$(log_group_of "$1")"
  found="$(fetched logs | jq -r --arg n "$name" \
    '.logGroups[] | select(.logGroupName == $n) | .retentionInDays // "none"')"
  if [[ -z "$found" ]]; then
    aws_ logs create-log-group --log-group-name "$name" --tags "mvr:runner-set=$set_id"
    aws_ logs put-retention-policy --log-group-name "$name" --retention-in-days "$retention"
    say create log-group "$name"
  elif [[ "$found" != "$retention" ]]; then
    aws_ logs put-retention-policy --log-group-name "$name" --retention-in-days "$retention"
    say update log-group "$name (retention $retention days)"
  else
    say exists log-group "$name"
  fi
}

# The permissions boundary every role of the set gets (issue 53, item 5): what the functions and
# their VMs need, nothing more, so no inline policy the deployer writes can give a role more.
# The deployer may create it but not change it: a boundary that differs stops bootstrap.
ensure_boundary() {
  local doc policy
  doc="$(render runner-set-boundary.json "$table")"
  policy="$(fetched iam | jq -c --arg n "$boundary_policy" \
    '.policies[] | select(.Arn | endswith("/" + $n))')"
  if [[ -z "$policy" ]]; then
    aws_ iam create-policy --policy-name "$boundary_policy" --policy-document "$doc" \
      --description "mvr runner set $set_id: permissions boundary of its roles" \
      --tags "${tags_kv[@]}" >/dev/null
    say create boundary "$boundary_policy"
  elif [[ "$(jq -cS ".PolicyVersionList[] | select(.IsDefaultVersion) | .Document | $normalize" \
    <<<"$policy")" == "$doc" ]]; then
    say exists boundary "$boundary_policy"
  else
    die "the permissions boundary $boundary_policy is not deploy/iam/runner-set-boundary.json \
filled for this set (another --execution-role, or changed by someone): the deployer may not change \
it; an administrator can set the new version (docs/iam.md, \"runner-set-boundary.json\")"
  fi
}

trust='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}'
ensure_role() {
  local fn="$1" role doc current bound
  role="$(role_of "$fn")"
  doc="$(render "runner-set-$fn.json" "$table")"
  current="$(fetched iam | jq -cS --arg r "$role" \
    ".roles[] | select(.RoleName == \$r) | [.RolePolicyList[]? | select(.PolicyName == \$r)
     | .PolicyDocument | $normalize][0] // \"\"")"
  if [[ -n "$current" ]]; then
    say exists role "$role"
    bound="$(fetched iam | jq -r --arg r "$role" \
      '.roles[] | select(.RoleName == $r) | .PermissionsBoundary.PermissionsBoundaryArn // ""')"
    if [[ "$bound" != "$boundary_arn" ]]; then
      # A role made before roles had a boundary, or given another one.
      aws_ iam put-role-permissions-boundary --role-name "$role" \
        --permissions-boundary "$boundary_arn"
      say update role "$role (permissions boundary $boundary_policy)"
    fi
  else
    aws_ iam create-role --role-name "$role" --assume-role-policy-document "$trust" \
      --permissions-boundary "$boundary_arn" \
      --description "mvr runner set $set_id: the $fn function" --tags "${tags_kv[@]}" >/dev/null
    say create role "$role"
  fi
  if [[ "$current" == "$doc" ]]; then
    say exists policy "$role (inline)"
  else
    aws_ iam put-role-policy --role-name "$role" --policy-name "$role" --policy-document "$doc"
    say "$([[ -z "$current" || "$current" == '""' ]] && echo create || echo update)" policy "$role (inline)"
  fi
}

# ensure_managed_policy NAME: a customer-managed policy for the Action's users, from
# deploy/iam/<NAME without the set's prefix>.json.
ensure_managed_policy() {
  local name="$1" doc arn policy oldest
  doc="$(render "${name#"$name_prefix"}.json" "$pool_table")"
  arn="arn:$partition:iam::$account:policy/$name"
  policy="$(fetched iam | jq -c --arg n "$name" '.policies[] | select(.Arn | endswith("/" + $n))')"
  if [[ -z "$policy" ]]; then
    aws_ iam create-policy --policy-name "$name" --policy-document "$doc" \
      --description "mvr runner set $set_id: attach to the Action's users" \
      --tags "${tags_kv[@]}" >/dev/null
    say create policy "$name"
    return
  fi
  if [[ "$(jq -cS ".PolicyVersionList[] | select(.IsDefaultVersion) | .Document | $normalize" \
    <<<"$policy")" == "$doc" ]]; then
    say exists policy "$name"
    return
  fi
  # At most 5 versions: drop the oldest non-default one first.
  oldest="$(jq -r '[.PolicyVersionList[] | select(.IsDefaultVersion | not) | .VersionId]
    | sort_by(ltrimstr("v") | tonumber) | if length >= 4 then .[0] else "" end' <<<"$policy")"
  [[ -z "$oldest" ]] || aws_ iam delete-policy-version --policy-arn "$arn" --version-id "$oldest"
  aws_ iam create-policy-version --policy-arn "$arn" --policy-document "$doc" \
    --set-as-default >/dev/null
  say update policy "$name"
}

# ensure_secret NAME [FILE]: a SecureString; from FILE, or generated (the webhook secret). An
# existing parameter is kept; rotate with `aws ssm put-parameter --overwrite`.
ensure_secret() {
  local name="$ssm_prefix/$1" file="${2:-}"
  if fetched params | jq -e --arg n "$name" 'index($n)' >/dev/null; then
    say exists parameter "$name"
    return
  fi
  if [[ -z "$file" ]]; then
    # The value goes through a file the CLI reads (never argv).
    file="$work/generated-secret"
    openssl rand -hex 32 | tr -d '\n' >"$file"
  fi
  aws_ ssm put-parameter --name "$name" --type SecureString --value "file://$file" \
    --tags "${tags_kv[@]}" >/dev/null
  rm -f "$work/generated-secret"
  echo "$name" >>"$work/new-params"
  say create parameter "$name"
}
secret_exists() {
  fetched params | jq -e --arg n "$ssm_prefix/$1" 'index($n)' >/dev/null ||
    grep -qx "$ssm_prefix/$1" "$work/new-params" 2>/dev/null
}

echo "bootstrap: runner set '$set_id' in $region (account $account)"
# Independent of one another, so side by side; the functions need all of them.
ensure_tables() { in_parallel ensure_table "$table" "$pool_table"; }
ensure_queues() {
  ensure_queue "$dlq" '{"MessageRetentionPeriod":"1209600"}'
  local redrive="{\"deadLetterTargetArn\":\"arn:$partition:sqs:$region:$account:$dlq\",\"maxReceiveCount\":\"5\"}"
  ensure_queue "$queue" "$(jq -cn --arg r "$redrive" \
    '{VisibilityTimeout: "900", MessageRetentionPeriod: "345600", RedrivePolicy: $r}')"
}
ensure_log_groups() { in_parallel ensure_log_group "${FUNCTIONS[@]}"; }
ensure_roles() {
  ensure_boundary
  in_parallel ensure_role "${FUNCTIONS[@]}"
}
ensure_managed_policies() {
  in_parallel ensure_managed_policy "$action_policy" "$action_pool_policy" "$action_sweep_policy"
}
ensure_secrets() {
  ensure_secret webhook-secret
  [[ -z "$token_file" ]] || ensure_secret github-token "$token_file"
  [[ -z "$app_key_file" ]] || ensure_secret github-app-private-key "$app_key_file"
}
# The dashboard and alarms name the functions and queues without needing them to exist.
in_parallel step ensure_tables ensure_queues ensure_log_groups ensure_roles ensure_managed_policies \
  ensure_secrets ${config_file:+ensure_dashboard ensure_alarms}
if [[ -n "$config_file" ]]; then
  # shellcheck source=deploy/functions.sh
  source "$deploy_dir/functions.sh"
  deploy_functions
else
  say skip function "the Lambda functions, their dashboard and alarms (no --config)"
fi

# Proof: the set is listed again (inventory.sh), the same listings teardown uses, and everything
# bootstrap made or found must be there.
# shellcheck source=deploy/inventory.sh
source "$deploy_dir/inventory.sh"
expected_resources() {
  local fn secret
  printf 'table %s\n' "$table" "$pool_table"
  printf 'queue %s\n' "$queue" "$dlq"
  for fn in "${FUNCTIONS[@]}"; do
    printf '%s\n' "log-group $(log_group_of "$fn")" "role $(role_of "$fn")" \
      "role-policy $(role_of "$fn"):$(role_of "$fn")"
  done
  printf 'policy %s\n' "$action_policy" "$action_pool_policy" "$action_sweep_policy"
  for secret in webhook-secret github-token github-app-private-key; do
    if secret_exists "$secret"; then echo "parameter $ssm_prefix/$secret"; fi
  done
  [[ -n "$config_file" ]] || return 0
  for fn in "${LAMBDA_FUNCTIONS[@]}"; do echo "function $(function_of "$fn")"; done
  printf '%s\n' "trigger $queue -> $(function_of launcher)" "schedule $janitor_rule" \
    "schedule $warm_pool_rule" "target $janitor_rule -> janitor" \
    "target $warm_pool_rule -> warm-pool" "dashboard $dashboard"
  desired_alarms | jq -r '"alarm " + .AlarmName'
}
verify_created() {
  local found line missing=()
  list_set "$work/verify"
  listings_ok aws || die "cannot list the account to check what was made; run bootstrap again"
  found="$(set_resources aws)"
  while read -r line; do
    named "$line" "$found" || missing+=("$line")
  done < <(expected_resources)
  [[ ${#missing[@]} -eq 0 ]] || die "made, but not there when listed again (run bootstrap \
again): $(printf '%s\n' "${missing[@]}" | paste -sd, | sed 's/,/, /g')"
  say checked set "$(wc -l <<<"$found") resources listed again, all there"
}
verify_created
echo "bootstrap: done. The Action's users get the policies $action_policy and"
echo "  $action_pool_policy (state-table: dynamodb:$pool_table); the sweep's job"
echo "  (mode: sweep) gets $action_sweep_policy."
[[ -z "$config_file" ]] || github_step
