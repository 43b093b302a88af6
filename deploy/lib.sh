# Shared by deploy/bootstrap.sh and deploy/teardown.sh (sourced, not run): arguments, the AWS CLI
# call with region and endpoint from the usual settings, and the names of everything a runner set
# owns, derived from its id so that teardown finds exactly what bootstrap made.

AWS="${AWS:-aws}"
deploy_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The Lambda functions of a runner set; each has a role, a policy file and a log group.
FUNCTIONS=(webhook launcher janitor warm-pool)

die() { echo "${0##*/}: $*" >&2; exit 1; }

# aws ARGS...: the CLI with the region, JSON output and, when AWS_ENDPOINT_URL is set, that
# endpoint (Debian's awscli 2.9 does not read the variable itself).
aws_() {
  local endpoint=()
  [[ -n "${AWS_ENDPOINT_URL:-}" ]] && endpoint=(--endpoint-url "$AWS_ENDPOINT_URL")
  "$AWS" "${endpoint[@]}" --region "$region" --output json "$@"
}

# Quietly: whether a read succeeds (used for "does it exist?").
exists() { aws_ "$@" >/dev/null 2>&1; }

resolve_region() {
  region="${AWS_REGION:-${AWS_DEFAULT_REGION:-}}"
  [[ -n "$region" ]] || region="$("$AWS" configure get region 2>/dev/null || true)"
  [[ -n "$region" ]] || die "no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION)"
}

# set_names ID: every name the runner set uses.
set_names() {
  set_id="$1"
  [[ "$set_id" =~ ^[a-z][a-z0-9-]{0,19}$ ]] ||
    die "--runner-set-id must be 1-20 characters: a lowercase letter, then letters, digits or '-' (got '$set_id')"
  table="mvr-$set_id"
  pool_table="mvr-$set_id-pools"
  queue="mvr-$set_id-jobs"
  dlq="mvr-$set_id-jobs-dlq"
  ssm_prefix="/mvr/$set_id"
  action_policy="mvr-$set_id-action"
  action_pool_policy="mvr-$set_id-action-pool"
}
role_of() { echo "mvr-$set_id-$1"; }
log_group_of() { echo "/aws/lambda/mvr-$set_id-$1"; }

# The account and partition of the credentials in use.
resolve_account() {
  local arn
  arn="$(aws_ sts get-caller-identity --query Arn --output text)" ||
    die "cannot read the caller identity (sts get-caller-identity): check the AWS credentials"
  partition="$(cut -d: -f2 <<<"$arn")"
  account="$(cut -d: -f5 <<<"$arn")"
}
