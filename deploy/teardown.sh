#!/usr/bin/env bash
# Removes what deploy/bootstrap.sh created for a runner set, and nothing else (it finds resources
# by the names bootstrap derives from the id). Without --yes it only prints what it would delete.
#
#   deploy/teardown.sh --runner-set-id ID [--yes]
#
# Region and endpoint come from the usual AWS settings (AWS_REGION, AWS_ENDPOINT_URL, profiles).
# The Action users' managed policies are detached from every user, group and role first (they
# cannot be deleted while attached); teardown prints each detachment.
set -euo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"

usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
set_id="" yes=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runner-set-id) set_id="${2:-}"; shift 2 ;;
    --yes) yes=1; shift ;;
    -h | --help) usage ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done
[[ -n "$set_id" ]] || usage
set_names "$set_id"
resolve_region
resolve_account

found=0
# act KIND NAME COMMAND...: runs COMMAND with --yes, otherwise says it would.
act() {
  local kind="$1" name="$2"
  shift 2
  found=$((found + 1))
  if [[ $yes -eq 1 ]]; then
    "$@" >/dev/null
    printf '%-13s %-15s %s\n' deleted "$kind" "$name"
  else
    printf '%-13s %-15s %s\n' 'would delete' "$kind" "$name"
  fi
}

echo "teardown: runner set '$set_id' in $region (account $account)$([[ $yes -eq 1 ]] || echo ': preview, nothing is deleted without --yes')"
for name in webhook-secret github-token github-app-private-key; do
  exists ssm get-parameter --name "$ssm_prefix/$name" &&
    act parameter "$ssm_prefix/$name" aws_ ssm delete-parameter --name "$ssm_prefix/$name"
done
for policy in "$action_policy" "$action_pool_policy"; do
  arn="arn:$partition:iam::$account:policy/$policy"
  exists iam get-policy --policy-arn "$arn" || continue
  for kind in User Group Role; do
    for who in $(aws_ iam list-entities-for-policy --policy-arn "$arn" \
      --query "Policy${kind}s[].${kind}Name" --output text); do
      lower="$(tr '[:upper:]' '[:lower:]' <<<"$kind")"
      act attachment "$policy from $lower $who" \
        aws_ iam "detach-$lower-policy" "--$lower-name" "$who" --policy-arn "$arn"
    done
  done
  for version in $(aws_ iam list-policy-versions --policy-arn "$arn" \
    --query 'Versions[?IsDefaultVersion==`false`].VersionId' --output text); do
    act policy-version "$policy $version" \
      aws_ iam delete-policy-version --policy-arn "$arn" --version-id "$version"
  done
  act policy "$policy" aws_ iam delete-policy --policy-arn "$arn"
done
for fn in "${FUNCTIONS[@]}"; do
  role="$(role_of "$fn")"
  if exists iam get-role --role-name "$role"; then
    for inline in $(aws_ iam list-role-policies --role-name "$role" --query PolicyNames \
      --output text); do
      act policy "$inline (inline, $role)" \
        aws_ iam delete-role-policy --role-name "$role" --policy-name "$inline"
    done
    act role "$role" aws_ iam delete-role --role-name "$role"
  fi
  group="$(log_group_of "$fn")"
  aws_ logs describe-log-groups --log-group-name-prefix "$group" \
    --query 'logGroups[].logGroupName' --output text | tr '\t' '\n' | grep -qx "$group" &&
    act log-group "$group" aws_ logs delete-log-group --log-group-name "$group"
done
for q in "$queue" "$dlq"; do
  url="$(aws_ sqs get-queue-url --queue-name "$q" --query QueueUrl --output text 2>/dev/null)" &&
    act queue "$q" aws_ sqs delete-queue --queue-url "$url"
done
for t in "$table" "$pool_table"; do
  exists dynamodb describe-table --table-name "$t" &&
    act table "$t" aws_ dynamodb delete-table --table-name "$t"
done
if [[ $found -eq 0 ]]; then
  echo "teardown: nothing of runner set '$set_id' exists"
elif [[ $yes -eq 0 ]]; then
  echo "teardown: $found to delete; run again with --yes to delete them"
else
  echo "teardown: deleted $found"
fi
