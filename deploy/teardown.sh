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
# MicroVM of the set's images (<ID>_<index>-<8 hex>) is terminated and waited for (up to
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

# shellcheck source=deploy/inventory.sh
source "$deploy_dir/inventory.sh"

# Every read at once (inventory.sh: list_set).
list_set "$work/list.1" microvms
resolve_account
round=1

# act KIND NAME COMMAND...: runs COMMAND with --yes, otherwise says it would. After the first
# round, something already gone is fine (IAM's listings can lag a deletion by seconds).
act() {
  local kind="$1" name="$2" out
  shift 2
  local verb=delete
  [[ "$kind" != microvm ]] || verb=terminate
  echo >>"$work/acts"
  if [[ $yes -eq 0 ]]; then
    printf '%-15s %-15s %s\n' "would $verb" "$kind" "$name"
  elif out="$("$@" 2>&1 >/dev/null)"; then
    printf '%-15s %-15s %s\n' "${verb}d" "$kind" "$name"
  elif [[ $round -gt 1 && "$out" =~ NoSuchEntity|NotFound|does\ not\ exist ]]; then
    printf '%-15s %-15s %s\n' gone "$kind" "$name"
  else
    echo "$out" >&2
    return 1
  fi
}

echo "teardown: runner set '$set_id' in $region (account $account)$([[ $yes -eq 1 ]] || echo ': preview, nothing is deleted without --yes')"
# Every listing must have worked before anything is deleted (a missing rule or function is fine).
listings_ok aws || die "cannot read the account; nothing was deleted"
{ fetched images && fetched vms; } >/dev/null || die "cannot list MicroVMs or their images: set \
AWS_ENDPOINT_URL_LAMBDA_MICROVMS if the MicroVMs API is elsewhere; nothing was deleted"

# 1. Nothing launches or notifies any more: the sweepers' schedules, the launcher's trigger, the
# functions (deleting a function deletes its Function URL and permissions), the dashboard and
# every alarm named mvr-ID.* (no other set's alarm has that prefix: an id has no '.').
delete_schedule() {
  local fn rule
  for fn in janitor warm-pool; do
    rule="${name_prefix}$fn"
    if named "$fn" "$(fetched_or_none "targets-$fn" | jq -r '.Targets[]?.Id')"; then
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

# 2. The set's MicroVMs: terminated, then waited for, before their images go.
delete_microvms() {
  local ours=() id arn state entry left deadline
  while read -r id arn state; do
    [[ -n "$id" ]] || continue
    ours+=("$id")
    if [[ "$state" == TERMINATING ]]; then
      printf "%-15s %-15s %s\n" waiting microvm "$id (terminating)"
    else
      act microvm "$id ($state, ${arn##*:})" microvms terminate-microvm --microvm-identifier "$id"
    fi
  done < <(set_vms)
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
  while read -r entry; do
    act image "${entry%% *}" microvms delete-microvm-image --image-identifier "${entry#* }"
  done < <(set_images)
}

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
  in_parallel delete_policy "$action_policy" "$action_pool_policy" "$action_sweep_policy"
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

delete_round() {
  in_parallel step delete_schedule delete_trigger delete_functions delete_monitoring
  delete_microvms
  in_parallel step delete_parameters delete_iam delete_log_groups delete_queues delete_tables
}
delete_round

# Proof: everything named for the set is listed again; what a round missed is deleted in the
# next, and what is still there after that fails the run, named.
if [[ $yes -eq 1 ]]; then
  while :; do
    round=$((round + 1))
    list_set "$work/list.$round" microvms
    listings_ok microvms || die "cannot list the account to check that all is gone; run teardown again"
    left="$(set_resources microvms)"
    [[ -n "$left" ]] || break
    [[ $round -lt 3 ]] || die "still there after deleting (run teardown again, or delete them \
by hand): $(paste -sd, <<<"$left" | sed 's/,/, /g')"
    echo "teardown: listed again: $(wc -l <<<"$left") still there; deleting them"
    delete_round
  done
fi

found="$(wc -l <"$work/acts" 2>/dev/null || echo 0)"
if [[ $found -eq 0 ]]; then
  echo "teardown: nothing of runner set '$set_id' exists"
elif [[ $yes -eq 0 ]]; then
  echo "teardown: $found to delete; run again with --yes to delete them"
else
  echo "teardown: deleted $found; listed again, nothing of the set is left"
fi
