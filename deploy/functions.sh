# shellcheck shell=bash
# The Lambda half of deploy/bootstrap.sh (sourced by it after the roles, queues and secrets
# exist): the webhook, launcher, janitor and warm-pool functions from one `mvr package lambda`
# zip, the webhook's Function URL, the launcher's SQS event source mapping, the janitor's and the
# warm-pool sweeper's EventBridge schedules, and the GitHub step. docs/lambda.md says what each handler expects.

# The configuration every function gets in MVR_CONFIG: the user's runner-set JSON with what
# bootstrap owns filled in (id, region, store, queue, secret references to SSM).
function_config() {
  local pat="" key="" role="" ca="" ca_pem=""
  # github.caBundle names a file here; the functions get the PEM text itself (no such file
  # exists inside Lambda).
  ca="$(jq -r '.github.caBundle // ""' "$config_file")"
  if [[ -n "$ca" && "$ca" != -----BEGIN* ]]; then
    [[ -r "$ca" ]] || die "github.caBundle: cannot read $ca (give the PEM file of the CA that signed the server's certificate)"
    ca_pem="$(cat "$ca")"
  fi
  secret_exists github-token && pat="ssm:$ssm_prefix/github-token"
  secret_exists github-app-private-key && key="ssm:$ssm_prefix/github-app-private-key"
  [[ -z "$execution_role" ]] || role="arn:$partition:iam::$account:role/$execution_role"
  jq -cS --arg id "$set_id" --arg region "$region" --arg store "dynamodb:$table" \
    --arg queue "sqs:$(cat "$work/url.$queue")" --arg hook "ssm:$ssm_prefix/webhook-secret" \
    --arg pat "$pat" --arg key "$key" --arg role "$role" --arg ca_pem "$ca_pem" '
    del(.listen, .shutdownGraceSeconds, .lambda)
    | .runnerSetId = $id | .region = $region | .store = $store
    | .queue = ((if (.queue | type) == "object" then .queue else {} end)
                + {uri: $queue, maxReceiveCount: 5})
    | .github.webhookSecretFile = $hook
    | if $pat != "" then .github.patFile = $pat else del(.github.patFile) end
    | if $key != "" then .github.privateKeyFile = $key else del(.github.privateKeyFile) end
    | if $role != "" then .launcher.executionRoleArn = $role else . end
    | if $ca_pem != "" then .github.caBundle = $ca_pem + "\n" else . end' "$config_file"
}

# desired_function FN: the settings bootstrap gives function FN, in ListFunctions' shape.
desired_function() {
  local fn="$1" timeout=30 memory=256
  case "$fn" in
    # A batch's launches run concurrently, each up to the launch timeout.
    launcher) timeout=$(jq '[(.launcher.launchTimeoutSeconds // 300) + 60, 900] | min' \
      <<<"$config") memory=512 ;;
    janitor) timeout=120 ;;
    # A sweep follows its pre-boots for up to a minute (hot members step without waiting).
    warm-pool) timeout=$(jq '[(.warmPool.bootTimeoutSeconds // 300) + 60, 900] | min' \
      <<<"$config") ;;
  esac
  jq -cS -n --arg name "$(function_of "$fn")" --arg fn "$fn" --arg config "$config" \
    --arg role "arn:$partition:iam::$account:role/$(role_of "$fn")" --arg arch "$arch" \
    --argjson timeout "$timeout" --argjson memory "$memory" \
    '{FunctionName: $name, Handler: $fn, Runtime: "provided.al2023", Role: $role,
      Timeout: $timeout, MemorySize: $memory, Architectures: [$arch],
      Environment: {Variables: {MVR_CONFIG: $config}}}'
}

# create_function ARGS...: create-function, retried while IAM has not yet propagated a new role
# ("cannot be assumed by Lambda" for up to ~10 s after create-role).
create_function() {
  local attempt out
  for attempt in $(seq 1 12); do
    if out="$(aws_ lambda create-function "$@" 2>&1 >/dev/null)"; then return 0; fi
    [[ "$out" == *"cannot be assumed"* && $attempt -lt 12 ]] || { echo "$out" >&2; return 1; }
    sleep 5
  done
}

ensure_function() {
  local fn="$1" want current name settings
  name="$(function_of "$fn")"
  want="$(desired_function "$fn")"
  current="$(fetched functions | jq -cS --arg n "$name" '.[] | select(.FunctionName == $n)')"
  settings=(--handler "$fn" --runtime provided.al2023 --role "$(jq -r .Role <<<"$want")"
    --timeout "$(jq .Timeout <<<"$want")" --memory-size "$(jq .MemorySize <<<"$want")"
    --environment "$(jq -c .Environment <<<"$want")")
  if [[ -z "$current" ]]; then
    create_function --function-name "$name" --zip-file "fileb://$package" \
      --architectures "$arch" --tags "mvr:runner-set=$set_id" "${settings[@]}"
    say create function "$name"
    return
  fi
  local changed=()
  if [[ "$(jq -r .CodeSha256 <<<"$current")" != "$code_sha" ||
    "$(jq -c .Architectures <<<"$current")" != "[\"$arch\"]" ]]; then
    aws_ lambda update-function-code --function-name "$name" --zip-file "fileb://$package" \
      --architectures "$arch" >/dev/null
    changed+=(code)
  fi
  if [[ "$(jq -cS "{$(jq -r 'keys | join(",")' <<<"$want")} | .Environment.Variables |=
    {MVR_CONFIG}" <<<"$current")" != "$want" ]]; then
    # A configuration update is refused while the code update is in progress.
    [[ ${#changed[@]} -eq 0 ]] || aws_ lambda wait function-updated --function-name "$name"
    aws_ lambda update-function-configuration --function-name "$name" "${settings[@]}" >/dev/null
    changed+=(configuration)
  fi
  if [[ ${#changed[@]} -eq 0 ]]; then
    say exists function "$name"
  else
    say update function "$name (${changed[*]})"
  fi
}

# has_statement FN ID: whether FN's resource policy (fetched as policy-FN) has statement ID.
# (jq 1.6's -e succeeds on empty input, so the ids are compared as text; lib.sh: named.)
has_statement() {
  named "$2" "$(fetched_or_none "policy-$1" | jq -r '.Policy // "{}" | fromjson | .Statement[]?.Sid')"
}

# ensure_permission FN ID ARGS...: a statement of FN's resource policy (add-permission), kept
# when one of that id exists (bootstrap.sh fetched the policy as policy-FN).
ensure_permission() {
  local name
  name="$(function_of "$1")"
  if has_statement "$1" "$2"; then
    say exists permission "$name: $2"
  else
    aws_ lambda add-permission --function-name "$name" --statement-id "$2" "${@:3}" >/dev/null
    say create permission "$name: $2"
  fi
}

ensure_function_url() {
  local name
  name="$(function_of webhook)"
  webhook_url="$(fetched_or_none url | jq -r '.FunctionUrl // empty')"
  if [[ -n "$webhook_url" ]]; then
    say exists function-url "$name"
  else
    webhook_url="$(aws_ lambda create-function-url-config --function-name "$name" \
      --auth-type NONE --query FunctionUrl --output text)"
    say create function-url "$name"
  fi
  echo "$webhook_url" >"$work/webhook-url"
  # GitHub signs its deliveries and the function verifies them: the URL itself is public.
  ensure_permission webhook function-url-public --action lambda:InvokeFunctionUrl \
    --principal '*' --function-url-auth-type NONE
  # Function URLs created since October 2025 also need lambda:InvokeFunction, limited to calls
  # through the URL (InvokedViaFunctionUrl), which CLIs older than that cannot send.
  if ! has_statement webhook function-url-invoke; then
    local out
    if out="$(aws_ lambda add-permission --function-name "$name" \
      --statement-id function-url-invoke --action lambda:InvokeFunction --principal '*' \
      --invoked-via-function-url 2>&1 >/dev/null)"; then
      say create permission "$name: function-url-invoke"
    elif [[ "$out" == *"Unknown options"* ]]; then
      say warn permission "$name: function-url-invoke: this AWS CLI lacks --invoked-via-function-url; run the line below with a newer one"
      echo "        aws lambda add-permission --function-name $name --statement-id function-url-invoke --action lambda:InvokeFunction --principal '*' --invoked-via-function-url"
    else
      echo "$out" >&2
      return 1
    fi
  else
    say exists permission "$name: function-url-invoke"
  fi
}

ensure_event_source() {
  local name arn current
  name="$(function_of launcher)"
  arn="arn:$partition:sqs:$region:$account:$queue"
  current="$(fetched_or_none mappings | jq -c --arg a "$arn" \
    '.EventSourceMappings[]? | select(.EventSourceArn == $a)')"
  local settings=(--batch-size 10 --maximum-batching-window-in-seconds 0
    --function-response-types ReportBatchItemFailures)
  if [[ -z "$current" ]]; then
    aws_ lambda create-event-source-mapping --function-name "$name" --event-source-arn "$arn" \
      "${settings[@]}" >/dev/null
    say create trigger "$queue -> $name"
  elif [[ "$(jq -c '[.BatchSize, .MaximumBatchingWindowInSeconds // 0, .FunctionResponseTypes]' \
    <<<"$current")" != '[10,0,["ReportBatchItemFailures"]]' ]]; then
    aws_ lambda update-event-source-mapping --uuid "$(jq -r .UUID <<<"$current")" \
      "${settings[@]}" >/dev/null
    say update trigger "$queue -> $name"
  else
    say exists trigger "$queue -> $name"
  fi
}

# schedule FN RULE SECONDS ENABLED WHAT: FN's EventBridge rule, every SECONDS rounded up to
# whole minutes (EventBridge's finest rate); ENABLED=0 keeps the rule, disabled.
schedule() {
  local fn="$1" rule="$2" seconds="$3" enabled="$4" what="$5" name minutes expr state current
  name="$(function_of "$fn")"
  minutes=$(((seconds + 59) / 60))
  [[ $minutes -ge 1 ]] || minutes=1
  expr="rate($minutes minute$([[ $minutes -eq 1 ]] || echo s))"
  state="$([[ $enabled -eq 1 ]] && echo ENABLED || echo DISABLED)"
  current="$(fetched rules | jq -r --arg n "$rule" \
    '.Rules[] | select(.Name == $n) | "\(.ScheduleExpression) \(.State)"')"
  if [[ "$current" != "$expr $state" ]]; then
    aws_ events put-rule --name "$rule" --schedule-expression "$expr" --state "$state" \
      --description "mvr runner set $set_id: $what" --tags "${tags_kv[@]}" >/dev/null
    say "$([[ -z "$current" ]] && echo create || echo update)" schedule "$rule ($expr $state)"
  else
    say exists schedule "$rule ($expr $state)"
  fi
  if [[ "$(fetched_or_none "targets-$fn" | jq -r --arg id "$fn" \
    '.Targets[]? | select(.Id == $id) | .Arn')" == \
    "arn:$partition:lambda:$region:$account:function:$name" ]]; then
    say exists target "$rule -> $name"
  else
    aws_ events put-targets --rule "$rule" --targets \
      "Id=$fn,Arn=arn:$partition:lambda:$region:$account:function:$name" >/dev/null
    say create target "$rule -> $name"
  fi
  ensure_permission "$fn" "$fn-schedule" --action lambda:InvokeFunction \
    --principal events.amazonaws.com --source-arn "arn:$partition:events:$region:$account:rule/$rule"
}

# The janitor's schedule, from janitor.intervalSeconds (0: the janitor is off).
ensure_schedule() {
  local seconds
  seconds="$(jq '.janitor.intervalSeconds // 60' <<<"$config")"
  schedule janitor "$janitor_rule" "$seconds" "$([[ $seconds -eq 0 ]] && echo 0 || echo 1)" \
    "janitor sweeps"
}

# The pool sweeper's schedule, from warmPool.intervalSeconds: enabled only when a class has a warm
# or a hot pool (and the interval is not 0).
ensure_warm_pool_schedule() {
  local seconds pools
  seconds="$(jq '.warmPool.intervalSeconds // 30' <<<"$config")"
  pools="$(jq '[.classes[]? | (.warmPoolSize // 0) + (.hotPoolSize // 0)] | any(. > 0)' \
    <<<"$config")"
  schedule warm-pool "$warm_pool_rule" "$seconds" \
    "$([[ $seconds -ne 0 && "$pools" == true ]] && echo 1 || echo 0)" "warm-pool sweeps"
}

# ensure_concurrency FN N: FN's reserved concurrency is N (issue 53, item 7): a flood of requests
# to the public Function URL scales the webhook to N instances at most, and the launcher never
# takes the account's whole concurrency (docs/lambda.md, "Reserved concurrency").
ensure_concurrency() {
  local name current
  name="$(function_of "$1")"
  current="$(fetched_or_none "concurrency-$1" | jq -r '.ReservedConcurrentExecutions // empty')"
  if [[ "$current" == "$2" ]]; then
    say exists concurrency "$name ($2)"
  else
    aws_ lambda put-function-concurrency --function-name "$name" \
      --reserved-concurrent-executions "$2" >/dev/null
    say "$([[ -z "$current" ]] && echo create || echo update)" concurrency "$name ($2)"
  fi
}
# From the user's file: function_config leaves the `lambda` object out of the functions'
# configuration (they do not use it).
ensure_concurrencies() {
  ensure_concurrency webhook "$(jq '.lambda.webhookReservedConcurrency // 10' "$config_file")"
  ensure_concurrency launcher "$(jq '.lambda.launcherReservedConcurrency // 10' "$config_file")"
}

deploy_functions() {
  secret_exists github-token || secret_exists github-app-private-key ||
    die "the launcher needs GitHub credentials: give --github-token-file or --github-app-key-file"
  config="$(function_config)"
  code_sha="$(openssl dgst -sha256 -binary "$package" | base64)"
  in_parallel ensure_function "${LAMBDA_FUNCTIONS[@]}"
  # Independent of one another: side by side.
  in_parallel step ensure_function_url ensure_event_source ensure_schedule \
    ensure_warm_pool_schedule ensure_concurrencies
}

# The GitHub step: bootstrap does not hold a GitHub credential that may create webhooks (the
# launcher's token only needs runner administration), so it prints what to set and how.
github_step() {
  local target hooks webhook_url
  webhook_url="$(cat "$work/webhook-url")"
  target="$(jq -r '.github.repository // .github.organization // empty' "$config_file")"
  if [[ "$(jq -r '.github.repository // empty' "$config_file")" == "$target" && -n "$target" ]]; then
    hooks="repos/$target/hooks"
  else
    hooks="orgs/$target/hooks"
  fi
  cat <<EOF
GitHub: add a webhook to ${target:-the repository or organisation} (Settings > Webhooks):
  Payload URL   $webhook_url
  Content type  application/json
  Secret        the value of SSM $ssm_prefix/webhook-secret
  Events        Workflow jobs only
or with the GitHub CLI (the secret goes through a pipe, never argv):
  aws ssm get-parameter --with-decryption --name $ssm_prefix/webhook-secret \\
    --query Parameter.Value --output text |
  jq -R '{name: "web", active: true, events: ["workflow_job"],
    config: {url: "$webhook_url", content_type: "json", secret: .}}' |
  gh api $hooks --input -
EOF
}
