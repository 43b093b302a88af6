# shellcheck shell=bash
# What of a runner set exists, as "KIND NAME" lines, read by one set of listings (sourced by
# deploy/bootstrap.sh and deploy/teardown.sh after lib.sh's set_names). Teardown lists before it
# deletes and again after, and fails naming whatever is left; bootstrap lists after creating and
# fails naming whatever it made that is not there. Kinds and names:
#   table NAME, queue NAME, log-group NAME, role NAME, role-policy ROLE:POLICY (inline),
#   policy NAME (the Action users' managed policies), parameter NAME, function NAME,
#   trigger QUEUE -> FUNCTION, schedule RULE, target RULE -> ID, alarm NAME, dashboard NAME,
#   and with the MicroVMs: image NAME, microvm ID (not TERMINATED, from one of the set's images).

# list_set DIR [microvms]: starts every listing (lib.sh: fetch) into DIR, a new directory; the
# fetched listings are read from there until the next list_set. With `microvms`, the set's images
# and the VMs too.
list_set() {
  listing_dir="$1"
  mkdir -p "$listing_dir"
  fetch caller aws_ sts get-caller-identity
  fetch params aws_ ssm get-parameters --names "$ssm_prefix/webhook-secret" \
    "$ssm_prefix/github-token" "$ssm_prefix/github-app-private-key" --query 'Parameters[].Name'
  fetch iam aws_ iam get-account-authorization-details --filter Role LocalManagedPolicy --query \
    "{roles: RoleDetailList[?starts_with(RoleName, '${name_prefix}')], policies: Policies[?contains(Arn, ':policy/${name_prefix}')]}"
  fetch logs aws_ logs describe-log-groups --log-group-name-prefix "/aws/lambda/${name_prefix}"
  fetch queues aws_ sqs list-queues --queue-name-prefix "$queue"
  fetch tables aws_ dynamodb list-tables
  fetch functions aws_ lambda list-functions \
    --query "Functions[?starts_with(FunctionName, '${name_prefix}')].FunctionName"
  fetch mappings aws_ lambda list-event-source-mappings --function-name "$(function_of launcher)"
  fetch targets-janitor aws_ events list-targets-by-rule --rule "$janitor_rule"
  fetch targets-warm-pool aws_ events list-targets-by-rule --rule "$warm_pool_rule"
  fetch rules aws_ events list-rules --name-prefix "${name_prefix}"
  fetch alarms aws_ cloudwatch describe-alarms --alarm-name-prefix "$alarm_prefix"
  fetch dashboard aws_ cloudwatch get-dashboard --dashboard-name "$dashboard"
  if [[ "${2:-}" == microvms ]]; then
    fetch images microvms list-microvm-images --name-filter "${set_id}_"
    fetch vms microvms list-microvms
  fi
}

# listings_ok aws|microvms: whether every listing of list_set worked (a function, rule or dashboard
# that does not exist is fine); prints the CLI's errors otherwise.
listings_ok() {
  local listing
  for listing in params iam logs queues tables functions rules alarms; do
    fetched "$listing" >/dev/null || return 1
  done
  for listing in mappings targets-janitor targets-warm-pool dashboard; do
    fetched_or_none "$listing" >/dev/null || return 1
  done
  [[ "${1:-}" != microvms ]] || { fetched images >/dev/null && fetched vms >/dev/null; }
}

# only NAME...: the lines of stdin that are one of the NAMEs (grep reads all of its input).
only() {
  local args=() n
  for n in "$@"; do args+=(-e "$n"); done
  grep -xF "${args[@]}" || true
}

# set_resources aws|microvms: every resource of the set the listings show, one "KIND NAME" a line
# (with microvms, the images and VMs too).
set_resources() {
  local fn roles=() logs=() fns=() rules=("$janitor_rule" "$warm_pool_rule")
  for fn in "${FUNCTIONS[@]}"; do roles+=("$(role_of "$fn")") logs+=("$(log_group_of "$fn")"); done
  for fn in "${LAMBDA_FUNCTIONS[@]}"; do fns+=("$(function_of "$fn")"); done
  names tables '.TableNames[]' | only "$table" "$pool_table" | sed 's/^/table /'
  names queues '.QueueUrls[]? | sub(".*/"; "")' | only "$queue" "$dlq" | sed 's/^/queue /'
  names logs '.logGroups[].logGroupName' | only "${logs[@]}" | sed 's/^/log-group /'
  names iam '.roles[].RoleName' | only "${roles[@]}" | sed 's/^/role /'
  fetched iam | jq -r '.roles[] | select(.RoleName | IN($ARGS.positional[])) | .RoleName as $r
    | .RolePolicyList[]? | "role-policy \($r):\(.PolicyName)"' --args "${roles[@]}"
  names iam '.policies[].Arn | sub(".*/"; "")' | only "$action_policy" "$action_pool_policy" \
    "$action_sweep_policy" |
    sed 's/^/policy /'
  names params '.[]?' | sed 's/^/parameter /'
  names functions '.[]' | only "${fns[@]}" | sed 's/^/function /'
  fetched_or_none mappings | jq -r '.EventSourceMappings[]? | "trigger \(.EventSourceArn |
    sub(".*:"; "")) -> \(.FunctionArn | sub(".*:function:"; "") | sub(":.*"; ""))"'
  names rules '.Rules[]?.Name' | only "${rules[@]}" | sed 's/^/schedule /'
  for fn in janitor warm-pool; do
    fetched_or_none "targets-$fn" | jq -r --arg r "${name_prefix}$fn" \
      '.Targets[]? | "target \($r) -> \(.Id)"'
  done
  names alarms '.MetricAlarms[]?, .CompositeAlarms[]? | .AlarmName' | sed 's/^/alarm /'
  [[ -z "$(fetched_or_none dashboard)" ]] || echo "dashboard $dashboard"
  [[ "${1:-}" == microvms ]] || return 0
  set_images | sed 's/ .*//; s/^/image /'
  set_vms | sed 's/ .*//; s/^/microvm /'
}

# set_images: "NAME ARN" of each of the set's images (image_pattern).
set_images() {
  local entry
  while read -r entry; do
    [[ "${entry%% *}" =~ $image_pattern ]] && echo "$entry"
  done < <(names images '.items[]? | "\(.name) \(.imageArn)"')
  return 0
}
# set_vms: "ID IMAGE_ARN STATE" of each VM, not TERMINATED, from one of the set's images.
set_vms() {
  local arns
  arns="$(set_images | sed 's/^[^ ]* //')"
  names vms '.items[]? | select(.state != "TERMINATED") | "\(.microvmId) \(.imageArn) \(.state)"' |
    while read -r id arn state; do
      ! named "$arn" "$arns" || echo "$id $arn $state"
    done
}
