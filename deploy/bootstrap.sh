#!/usr/bin/env bash
# Creates the AWS resources of a runner set with the AWS CLI, idempotently: a second run finds
# everything and changes nothing. Prints one line per resource: create, update or exists.
#
#   deploy/bootstrap.sh --runner-set-id ID [--execution-role NAME] [--action-image NAME]
#                       [--github-token-file F] [--github-app-key-file F] [--log-retention-days N]
#
# Region and endpoint come from the usual AWS settings (AWS_REGION, AWS_ENDPOINT_URL, profiles).
# What it makes (docs/operations.md): the state table and the Action's pool table (TTL on `ttl`),
# the job queue with its dead-letter queue and redrive, one log group and one IAM role per
# function with its policy from deploy/iam/, the Action users' managed policies, and SSM
# SecureString parameters for secrets (the webhook secret is generated and never printed).
set -euo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
set_id="" execution_role="" action_image="" token_file="" app_key_file="" retention=30
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runner-set-id) set_id="${2:-}"; shift 2 ;;
    --execution-role) execution_role="${2:-}"; shift 2 ;;
    --action-image) action_image="${2:-}"; shift 2 ;;
    --github-token-file) token_file="${2:-}"; shift 2 ;;
    --github-app-key-file) app_key_file="${2:-}"; shift 2 ;;
    --log-retention-days) retention="${2:-}"; shift 2 ;;
    -h | --help) usage ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done
[[ -n "$set_id" ]] || usage
set_names "$set_id"
for f in "$token_file" "$app_key_file"; do
  [[ -z "$f" || -r "$f" ]] || die "cannot read $f"
done
resolve_region
resolve_account
action_image="${action_image:-$set_id*}"
tags_kv=(Key=mvr:runner-set,Value="$set_id")
say() { printf '%-7s %-15s %s\n' "$1" "$2" "$3"; }

# render FILE TABLE: a policy of deploy/iam/ with its placeholders filled (compact, sorted keys);
# without an execution role, the statement that passes one is left out.
render() {
  python3 - "$deploy_dir/iam/$1" "$2" <<'PY'
import json, os, sys
doc = json.load(open(sys.argv[1]))
values = {"partition": os.environ["P"], "region": os.environ["R"], "account": os.environ["A"],
          "image": os.environ["IMAGE"], "table": sys.argv[2], "queue": os.environ["Q"],
          "execution_role": os.environ["ROLE"], "runner_set": os.environ["SET"]}
if not values["execution_role"]:
    doc["Statement"] = [s for s in doc["Statement"] if s["Sid"] != "PassExecutionRoleToMicrovms"]
text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
for k, v in values.items():
    text = text.replace("{{%s}}" % k, v)
print(text)
PY
}
export P="$partition" R="$region" A="$account" IMAGE="$action_image" Q="$queue" \
  ROLE="$execution_role" SET="$set_id"
normalize() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True, separators=(",", ":")))'; }

ensure_table() {
  local name="$1"
  if exists dynamodb describe-table --table-name "$name"; then
    say exists table "$name"
  else
    aws_ dynamodb create-table --table-name "$name" --billing-mode PAY_PER_REQUEST \
      --attribute-definitions AttributeName=pk,AttributeType=S AttributeName=sk,AttributeType=S \
      --key-schema AttributeName=pk,KeyType=HASH AttributeName=sk,KeyType=RANGE \
      --tags "${tags_kv[@]}" >/dev/null
    aws_ dynamodb wait table-exists --table-name "$name"
    say create table "$name"
  fi
  if [[ "$(aws_ dynamodb describe-time-to-live --table-name "$name" \
        --query 'TimeToLiveDescription.[TimeToLiveStatus,AttributeName]' --output text)" \
        =~ ^(ENABLED|ENABLING)[[:space:]]+ttl$ ]]; then
    say exists ttl "$name.ttl"
  else
    aws_ dynamodb update-time-to-live --table-name "$name" \
      --time-to-live-specification Enabled=true,AttributeName=ttl >/dev/null
    say create ttl "$name.ttl"
  fi
}

# ensure_queue NAME ATTRIBUTES_JSON: the queue, created with those attributes.
ensure_queue() {
  if exists sqs get-queue-url --queue-name "$1"; then
    say exists queue "$1"
  else
    aws_ sqs create-queue --queue-name "$1" --attributes "$2" \
      --tags "mvr:runner-set=$set_id" >/dev/null
    say create queue "$1"
  fi
}

ensure_log_group() {
  local name="$1" found=()
  read -r -a found < <(aws_ logs describe-log-groups --log-group-name-prefix "$name" \
    --query "logGroups[?logGroupName=='$name'] | [0].[logGroupName,retentionInDays]" \
    --output text || true)
  if [[ "${found[0]:-}" != "$name" ]]; then
    aws_ logs create-log-group --log-group-name "$name" --tags "mvr:runner-set=$set_id"
    aws_ logs put-retention-policy --log-group-name "$name" --retention-in-days "$retention"
    say create log-group "$name"
  elif [[ "${found[1]:-}" != "$retention" ]]; then
    aws_ logs put-retention-policy --log-group-name "$name" --retention-in-days "$retention"
    say update log-group "$name (retention $retention days)"
  else
    say exists log-group "$name"
  fi
}

trust='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}'
ensure_role() {
  local fn="$1" role doc current
  role="$(role_of "$fn")"
  doc="$(render "runner-set-$fn.json" "$table")"
  if exists iam get-role --role-name "$role"; then
    say exists role "$role"
  else
    aws_ iam create-role --role-name "$role" --assume-role-policy-document "$trust" \
      --description "mvr runner set $set_id: the $fn function" --tags "${tags_kv[@]}" >/dev/null
    say create role "$role"
  fi
  current="$(aws_ iam get-role-policy --role-name "$role" --policy-name "$role" \
    --query PolicyDocument 2>/dev/null | normalize 2>/dev/null || true)"
  if [[ "$current" == "$doc" ]]; then
    say exists policy "$role (inline)"
  else
    aws_ iam put-role-policy --role-name "$role" --policy-name "$role" --policy-document "$doc"
    say "$([[ -z "$current" ]] && echo create || echo update)" policy "$role (inline)"
  fi
}

# ensure_managed_policy NAME DOC: a customer-managed policy for the Action's users.
ensure_managed_policy() {
  local name="$1" doc="$2" arn version current oldest
  arn="arn:$partition:iam::$account:policy/$name"
  if ! exists iam get-policy --policy-arn "$arn"; then
    aws_ iam create-policy --policy-name "$name" --policy-document "$doc" \
      --description "mvr runner set $set_id: attach to the Action's users" \
      --tags "${tags_kv[@]}" >/dev/null
    say create policy "$name"
    return
  fi
  version="$(aws_ iam get-policy --policy-arn "$arn" --query Policy.DefaultVersionId --output text)"
  current="$(aws_ iam get-policy-version --policy-arn "$arn" --version-id "$version" \
    --query PolicyVersion.Document | normalize)"
  if [[ "$current" == "$doc" ]]; then
    say exists policy "$name"
    return
  fi
  # At most 5 versions: drop the oldest non-default one first.
  oldest="$(aws_ iam list-policy-versions --policy-arn "$arn" \
    --query 'Versions[?IsDefaultVersion==`false`].VersionId' --output text | tr '\t' '\n' |
    sort -V | head -1)"
  [[ -n "$oldest" && "$(aws_ iam list-policy-versions --policy-arn "$arn" \
    --query 'length(Versions)')" -ge 5 ]] &&
    aws_ iam delete-policy-version --policy-arn "$arn" --version-id "$oldest"
  aws_ iam create-policy-version --policy-arn "$arn" --policy-document "$doc" \
    --set-as-default >/dev/null
  say update policy "$name"
}

# ensure_secret NAME [FILE]: a SecureString; from FILE, or generated (the webhook secret). An
# existing parameter is kept; rotate with `aws ssm put-parameter --overwrite`.
ensure_secret() {
  local name="$ssm_prefix/$1" file="${2:-}"
  if exists ssm get-parameter --name "$name"; then
    say exists parameter "$name"
    return
  fi
  if [[ -n "$file" ]]; then
    aws_ ssm put-parameter --name "$name" --type SecureString --value "file://$file" \
      --tags "${tags_kv[@]}" >/dev/null
  else
    # The value goes through a file the CLI reads (never argv).
    local tmp
    tmp="$(mktemp)"
    openssl rand -hex 32 | tr -d '\n' >"$tmp"
    aws_ ssm put-parameter --name "$name" --type SecureString --value "file://$tmp" \
      --tags "${tags_kv[@]}" >/dev/null || { rm -f "$tmp"; exit 1; }
    rm -f "$tmp"
  fi
  say create parameter "$name"
}

echo "bootstrap: runner set '$set_id' in $region (account $account)"
ensure_table "$table"
ensure_table "$pool_table"
ensure_queue "$dlq" '{"MessageRetentionPeriod":"1209600"}'
dlq_arn="$(aws_ sqs get-queue-attributes --queue-url \
  "$(aws_ sqs get-queue-url --queue-name "$dlq" --query QueueUrl --output text)" \
  --attribute-names QueueArn --query Attributes.QueueArn --output text)"
redrive="{\"deadLetterTargetArn\":\"$dlq_arn\",\"maxReceiveCount\":\"5\"}"
ensure_queue "$queue" "$(python3 -c 'import json,sys; print(json.dumps({"VisibilityTimeout": "900", "MessageRetentionPeriod": "345600", "RedrivePolicy": sys.argv[1]}))' "$redrive")"
for fn in "${FUNCTIONS[@]}"; do
  ensure_log_group "$(log_group_of "$fn")"
  ensure_role "$fn"
done
ensure_managed_policy "$action_policy" "$(render action.json "$pool_table")"
ensure_managed_policy "$action_pool_policy" "$(render action-pool.json "$pool_table")"
ensure_secret webhook-secret
[[ -n "$token_file" ]] && ensure_secret github-token "$token_file"
[[ -n "$app_key_file" ]] && ensure_secret github-app-private-key "$app_key_file"
echo "bootstrap: done. GitHub webhook secret: SSM $ssm_prefix/webhook-secret (read it with"
echo "  aws ssm get-parameter --with-decryption --name $ssm_prefix/webhook-secret); the Action's"
echo "  users get the policies $action_policy and $action_pool_policy (state-table: dynamodb:$pool_table)."
