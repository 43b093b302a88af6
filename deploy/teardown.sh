#!/usr/bin/env bash
# Removes what deploy/bootstrap.sh created for a runner set, and nothing else (it finds resources
# by the names bootstrap derives from the id), and the set's MicroVMs. Without --yes it only
# prints what it would delete.
#
#   deploy/teardown.sh --runner-set-id ID [--yes] [--wait-seconds N]
#
# Region and endpoint come from the usual AWS settings (AWS_REGION, AWS_ENDPOINT_URL, profiles;
# AWS_ENDPOINT_URL_LAMBDA_MICROVMS for the MicroVMs API). Order: the functions and their
# triggers, the dashboard and the alarms first (nothing launches or notifies any more), then every
# MicroVM of the set's images (<ID><index>-<8 hex>) is terminated and waited for (up to
# --wait-seconds, default 600), then the images, secrets, policies, roles, log groups, queues and
# tables. The Action users' managed policies are detached from every user, group and role first;
# teardown prints each detachment. On a half-deployed account it deletes what exists and skips
# the rest.
set -euo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
set_id="" yes=0 wait_seconds=600
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runner-set-id) set_id="${2:-}"; shift 2 ;;
    --yes) yes=1; shift ;;
    --wait-seconds) wait_seconds="${2:-}"; shift 2 ;;
    -h | --help) usage ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done
[[ -n "$set_id" ]] || usage
[[ "$wait_seconds" =~ ^[0-9]+$ ]] || die "--wait-seconds must be a number of seconds"
set_names "$set_id"
command -v jq >/dev/null || die "needs jq (Debian: apt-get install jq)"
resolve_region
model_dir >/dev/null

# Every read at once (lib.sh: fetch).
fetch caller aws_ sts get-caller-identity
fetch params aws_ ssm get-parameters --names "$ssm_prefix/webhook-secret" \
  "$ssm_prefix/github-token" "$ssm_prefix/github-app-private-key" --query 'Parameters[].Name'
fetch iam aws_ iam get-account-authorization-details --filter Role LocalManagedPolicy --query \
  "{roles: RoleDetailList[?starts_with(RoleName, 'mvr-$set_id-')], policies: Policies[?contains(Arn, ':policy/mvr-$set_id-')]}"
fetch logs aws_ logs describe-log-groups --log-group-name-prefix "/aws/lambda/mvr-$set_id-"
fetch queues aws_ sqs list-queues --queue-name-prefix "$queue"
fetch tables aws_ dynamodb list-tables
fetch functions aws_ lambda list-functions \
  --query "Functions[?starts_with(FunctionName, 'mvr-$set_id-')].FunctionName"
fetch mappings aws_ lambda list-event-source-mappings --function-name "$(function_of launcher)"
fetch targets-janitor aws_ events list-targets-by-rule --rule "$janitor_rule"
fetch targets-warm-pool aws_ events list-targets-by-rule --rule "$warm_pool_rule"
fetch rules aws_ events list-rules --name-prefix "mvr-$set_id-"
fetch alarms aws_ cloudwatch describe-alarms --alarm-name-prefix "$alarm_prefix"
fetch dashboard aws_ cloudwatch get-dashboard --dashboard-name "$dashboard"
fetch images microvms list-microvm-images --name-filter "$set_id"
fetch vms microvms list-microvms
resolve_account

# act KIND NAME COMMAND...: runs COMMAND with --yes, otherwise says it would.
act() {
  local kind="$1" name="$2"
  shift 2
  local verb=delete
  [[ "$kind" != microvm ]] || verb=terminate
  echo >>"$work/acts"
  if [[ $yes -eq 1 ]]; then
    "$@" >/dev/null
    printf '%-15s %-15s %s\n' "${verb}d" "$kind" "$name"
  else
    printf '%-15s %-15s %s\n' "would $verb" "$kind" "$name"
  fi
}
# names NAME JQ: the names a fetched listing holds (one a line), by a jq filter.
names() { fetched "$1" | jq -r "$2"; }
named() { local n="$1"; shift; printf '%s\n' "$@" | grep -qxF -- "$n"; }

echo "teardown: runner set '$set_id' in $region (account $account)$([[ $yes -eq 1 ]] || echo ': preview, nothing is deleted without --yes')"
# Every listing must have worked before anything is deleted (a missing rule or function is fine).
for listing in params iam logs queues tables functions rules alarms; do
  fetched "$listing" >/dev/null || die "cannot read the account ($listing); nothing was deleted"
done
{ fetched_or_none mappings >/dev/null && fetched_or_none targets-janitor >/dev/null &&
  fetched_or_none targets-warm-pool >/dev/null && fetched_or_none dashboard >/dev/null; } ||
  die "cannot read the launcher's trigger, the sweepers' schedules or the dashboard; nothing was deleted"
for listing in images vms; do
  fetched "$listing" >/dev/null || die "cannot list MicroVMs or their images: set \
AWS_ENDPOINT_URL_LAMBDA_MICROVMS if the MicroVMs API is elsewhere; nothing was deleted"
done
mapfile -t images < <(names images '.items[]? | "\(.name) \(.imageArn)"')
mapfile -t vms < <(names vms '.items[]? | select(.state != "TERMINATED")
  | "\(.microvmId) \(.imageArn) \(.state)"')

# 1. Nothing launches or notifies any more: the sweepers' schedules, the launcher's trigger, the
# functions (deleting a function deletes its Function URL and permissions), the dashboard and
# every alarm named mvr-ID.* (no other set's alarm has that prefix: an id has no '.').
delete_schedule() {
  local fn rule
  for fn in janitor warm-pool; do
    rule="mvr-$set_id-$fn"
    if fetched_or_none "targets-$fn" | jq -r '.Targets[]?.Id' | grep -qx "$fn"; then
      act target "$rule -> $fn" aws_ events remove-targets --rule "$rule" --ids "$fn"
    fi
    if named "$rule" "$(names rules '.Rules[]?.Name')"; then
      act schedule "$rule" aws_ events delete-rule --name "$rule"
    fi
  done
}
delete_trigger() {
  local uuid
  for uuid in $(fetched_or_none mappings | jq -r '.EventSourceMappings[]?.UUID'); do
    act trigger "$queue -> $(function_of launcher)" aws_ lambda delete-event-source-mapping --uuid "$uuid"
  done
}
delete_function() {
  named "$(function_of "$1")" "$(names functions '.[]')" || return 0
  act function "$(function_of "$1")" aws_ lambda delete-function --function-name "$(function_of "$1")"
}
delete_functions() { in_parallel delete_function "${LAMBDA_FUNCTIONS[@]}"; }
delete_monitoring() {
  local alarms
  mapfile -t alarms < <(names alarms '[.MetricAlarms[]?, .CompositeAlarms[]? | .AlarmName]
    | sort[]')
  [[ ${#alarms[@]} -eq 0 ]] ||
    act alarm "${alarms[*]}" aws_ cloudwatch delete-alarms --alarm-names "${alarms[@]}"
  [[ -z "$(fetched_or_none dashboard)" ]] ||
    act dashboard "$dashboard" aws_ cloudwatch delete-dashboards --dashboard-names "$dashboard"
}
in_parallel step delete_schedule delete_trigger delete_functions delete_monitoring

# 2. The set's MicroVMs: terminated, then waited for, before their images go.
set_arns=()
for entry in "${images[@]}"; do
  [[ "${entry%% *}" =~ $image_pattern ]] && set_arns+=("${entry#* }")
done
ours=()
for entry in "${vms[@]}"; do
  read -r id arn state <<<"$entry"
  named "$arn" "${set_arns[@]}" || continue
  ours+=("$id")
  if [[ "$state" == TERMINATING ]]; then
    printf "%-15s %-15s %s\n" waiting microvm "$id (terminating)"
  else
    act microvm "$id ($state, ${arn##*:})" microvms terminate-microvm --microvm-identifier "$id"
  fi
done
if [[ $yes -eq 1 && ${#ours[@]} -gt 0 ]]; then
  deadline=$((SECONDS + wait_seconds))
  while :; do
    left="$(microvms list-microvms | jq '[.items[]? | select(.state != "TERMINATED"
      and (.microvmId | IN($ARGS.positional[])))] | length' --args "${ours[@]}")"
    [[ "$left" == 0 ]] && break
    [[ $SECONDS -lt $deadline ]] ||
      die "$left MicroVM(s) of the set did not reach TERMINATED within $wait_seconds s; run teardown again"
    sleep 2
  done
  printf "%-15s %-15s %s\n" terminated microvms "${#ours[@]} (all TERMINATED)"
fi
for entry in "${images[@]}"; do
  [[ "${entry%% *}" =~ $image_pattern ]] || continue
  act image "${entry%% *}" microvms delete-microvm-image --image-identifier "${entry#* }"
done

# 3. The rest, side by side where independent.
delete_parameters() {
  local params
  mapfile -t params < <(names params '.[]?')
  [[ ${#params[@]} -eq 0 ]] ||
    act parameter "${params[*]}" aws_ ssm delete-parameters --names "${params[@]}"
}
delete_policy() {
  local policy arn
  policy="$(fetched iam | jq -c --arg n "$1" '.policies[] | select(.Arn | endswith("/" + $n))')"
  [[ -n "$policy" ]] || return 0
  arn="$(jq -r .Arn <<<"$policy")"
  if [[ "$(jq -r '.AttachmentCount // 0' <<<"$policy")" != 0 ]]; then
    while read -r kind who; do
      [[ -n "$kind" ]] || continue
      act attachment "$1 from $kind $who" aws_ iam "detach-$kind-policy" "--$kind-name" "$who" \
        --policy-arn "$arn"
    done < <(aws_ iam list-entities-for-policy --policy-arn "$arn" |
      jq -r '(.PolicyUsers[]? | "user \(.UserName)"), (.PolicyGroups[]? | "group \(.GroupName)"),
             (.PolicyRoles[]? | "role \(.RoleName)")')
  fi
  for version in $(jq -r '.PolicyVersionList[] | select(.IsDefaultVersion | not) | .VersionId' \
    <<<"$policy"); do
    act policy-version "$1 $version" aws_ iam delete-policy-version --policy-arn "$arn" \
      --version-id "$version"
  done
  act policy "$1" aws_ iam delete-policy --policy-arn "$arn"
}
delete_role() {
  local role details
  role="$(role_of "$1")"
  details="$(fetched iam | jq -c --arg r "$role" '.roles[] | select(.RoleName == $r)')"
  [[ -n "$details" ]] || return 0
  for inline in $(jq -r '.RolePolicyList[]?.PolicyName' <<<"$details"); do
    act policy "$inline (inline, $role)" aws_ iam delete-role-policy --role-name "$role" \
      --policy-name "$inline"
  done
  for arn in $(jq -r '.AttachedManagedPolicies[]?.PolicyArn' <<<"$details"); do
    act attachment "${arn##*/} from role $role" aws_ iam detach-role-policy --role-name "$role" \
      --policy-arn "$arn"
  done
  act role "$role" aws_ iam delete-role --role-name "$role"
}
# The Action users' policies before the roles (one could be attached to a role).
delete_iam() {
  in_parallel delete_policy "$action_policy" "$action_pool_policy"
  in_parallel delete_role "${FUNCTIONS[@]}"
}
delete_log_group() {
  named "$(log_group_of "$1")" "$(names logs '.logGroups[].logGroupName')" || return 0
  act log-group "$(log_group_of "$1")" aws_ logs delete-log-group --log-group-name "$(log_group_of "$1")"
}
delete_log_groups() { in_parallel delete_log_group "${FUNCTIONS[@]}"; }
delete_queue() {
  local url
  url="$(names queues '.QueueUrls[]?' | grep -- "/$1\$" || true)"
  [[ -z "$url" ]] || act queue "$1" aws_ sqs delete-queue --queue-url "$url"
}
delete_table() {
  named "$1" "$(names tables '.TableNames[]')" || return 0
  act table "$1" aws_ dynamodb delete-table --table-name "$1"
}
delete_queues() { in_parallel delete_queue "$queue" "$dlq"; }
delete_tables() { in_parallel delete_table "$table" "$pool_table"; }
in_parallel step delete_parameters delete_iam delete_log_groups delete_queues delete_tables

found="$(wc -l <"$work/acts" 2>/dev/null || echo 0)"
if [[ $found -eq 0 ]]; then
  echo "teardown: nothing of runner set '$set_id' exists"
elif [[ $yes -eq 0 ]]; then
  echo "teardown: $found to delete; run again with --yes to delete them"
else
  echo "teardown: deleted $found"
fi
