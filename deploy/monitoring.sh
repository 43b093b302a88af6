# shellcheck shell=bash
# The monitoring part of deploy/bootstrap.sh (sourced by it; used with --config): the runner
# set's CloudWatch dashboard mvr-ID over the functions' EMF metrics and the queues
# (deploy/cloudwatch/dashboard.jq), and its alarms mvr-ID.<what> (deploy/cloudwatch/alarms.jq)
# with the --alarm-topic as their action. put-dashboard and put-metric-alarm replace the whole
# resource, so each is called only where what exists differs from what is wanted: a second run
# prints `exists`, and an alarm or dashboard edited by hand is put back.

# The alarms' actions (a JSON array): the --alarm-topic, or none.
alarm_actions() {
  if [[ -n "$alarm_topic" ]]; then jq -cn --arg t "$alarm_topic" '[$t]'; else echo '[]'; fi
}

# desired_alarms: one put-metric-alarm input a line. The janitor's alarm counts sweeps, so its
# period is the janitor's schedule (functions.sh: whole minutes, at least one).
desired_alarms() {
  local minutes
  minutes="$(jq '[((.janitor.intervalSeconds // 60) + 59) / 60 | floor, 1] | max' "$config_file")"
  jq -cn --arg id "$set_id" --arg prefix "$alarm_prefix" --arg dlq "$dlq" \
    --argjson sweep $((minutes * 60)) --argjson actions "$(alarm_actions)" \
    -f "$deploy_dir/cloudwatch/alarms.jq"
}

desired_dashboard() {
  local arns functions
  arns="$(desired_alarms | jq -cs --arg a "arn:$partition:cloudwatch:$region:$account:alarm:" \
    'map($a + .AlarmName)')"
  functions="$(jq -cn --arg p "${name_prefix}" '$ARGS.positional | map($p + .)' \
    --args "${LAMBDA_FUNCTIONS[@]}")"
  jq -cSn --arg id "$set_id" --arg region "$region" --arg queue "$queue" --arg dlq "$dlq" \
    --argjson alarms "$arns" --argjson functions "$functions" \
    -f "$deploy_dir/cloudwatch/dashboard.jq"
}

ensure_dashboard() {
  local want current
  want="$(desired_dashboard)"
  current="$(fetched_or_none dashboard | jq -cS '.DashboardBody // empty | fromjson')"
  if [[ "$current" == "$want" ]]; then
    say exists dashboard "$dashboard"
    return
  fi
  aws_ cloudwatch put-dashboard --dashboard-name "$dashboard" --dashboard-body "$want" >/dev/null
  say "$([[ -z "$current" ]] && echo create || echo update)" dashboard "$dashboard"
}

# Whether an alarm as describe-alarms shows it (the input) has every setting of $want: the
# settings bootstrap gives, each compared as deep as $want goes (CloudWatch adds the state,
# timestamps and ARN), dimensions in any order; tags are given at creation only.
same_alarm='
  def dims: walk(if type == "object" and has("Dimensions") then .Dimensions |= sort_by(.Name)
                 else . end);
  def like($w): if ($w | type) == "object" and type == "object" then
      . as $c | reduce ($w | keys[]) as $k ({}; .[$k] = ($c[$k] | like($w[$k])))
    elif ($w | type) == "array" and type == "array" and length == ($w | length) then
      [range(length) as $i | .[$i] | like($w[$i])]
    else . end;
  ($want | del(.Tags) | dims) as $w | (dims | like($w)) == $w'

# ensure_alarm JSON: one alarm of desired_alarms.
ensure_alarm() {
  local want="$1" name current verb=update note=""
  name="$(jq -r .AlarmName <<<"$want")"
  current="$(fetched alarms | jq -c --arg n "$name" '.MetricAlarms[]? | select(.AlarmName == $n)')"
  if [[ -n "$current" ]] && jq -e --argjson want "$want" "$same_alarm" <<<"$current" >/dev/null; then
    say exists alarm "$name"
    return
  fi
  aws_ cloudwatch put-metric-alarm --cli-input-json "$want"
  [[ -n "$current" ]] || verb=create
  if [[ -z "$alarm_topic" && -n "$current" &&
    "$(jq '.AlarmActions | length' <<<"$current")" != 0 ]]; then
    note=" (its actions removed: no --alarm-topic)"
  fi
  say "$verb" alarm "$name$note"
}
ensure_alarms() {
  local alarms
  mapfile -t alarms < <(desired_alarms)
  in_parallel ensure_alarm "${alarms[@]}"
}
