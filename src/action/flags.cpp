#include "action/flags.h"

namespace mvr::action {
namespace {

constexpr bool kRuntime = false;  // given by the Actions runtime, not an action.yml input

}  // namespace

const std::vector<FlagDoc>& StartFlags() {
  static const std::vector<FlagDoc> kFlags = {
      {"repository", "owner/name (default: GITHUB_REPOSITORY)", kRuntime},
      {"repository-id", "numeric repository id (default: GITHUB_REPOSITORY_ID)", kRuntime},
      {"run-id", "workflow run id (default: GITHUB_RUN_ID)", kRuntime},
      {"run-attempt", "workflow run attempt (default: GITHUB_RUN_ATTEMPT)", kRuntime},
      {"job", "job id (default: GITHUB_JOB)", kRuntime},
      {"strategy", "the strategy context as JSON (default: MVR_STRATEGY, set by action.yml)",
       kRuntime},
      {"matrix", "the matrix context as JSON (default: MVR_MATRIX, set by action.yml)", kRuntime},
      {"step", "the calling step's id (default: GITHUB_ACTION)", kRuntime},
      {"github-api-url", "GitHub API base URL (default: GITHUB_API_URL or https://api.github.com)",
       kRuntime},
      {"region", "AWS region (default: AWS_REGION)"},
      {"image-id", "MicroVM image ID or ARN"},
      {"image-version", "image version (default: the latest ACTIVE one)"},
      {"execution-role-arn", "IAM role the MicroVM assumes"},
      {"runner-group-id", "runner group id (default 1)"},
      {"runner-labels", "extra runner labels, comma-separated"},
      {"startup-timeout-seconds", "overall start deadline (default 300)"},
      {"log-group", "CloudWatch log group for the MicroVM"},
      {"ingress-connectors",
       "network connectors letting traffic in (default: AWS's ALL_INGRESS; none: no list)"},
      {"egress-connectors",
       "network connectors for outbound traffic (default: AWS's INTERNET_EGRESS; none: no list)"},
      {"idempotency-key", "tells apart starts that would otherwise have the same identity"},
      {"ephemeral-max-lifetime-seconds",
       "ephemeral: the MicroVM's maximum duration (default: job-timeout-minutes x 60 + "
       "startup-timeout-seconds + 300, at most 28800)"},
      {"job-timeout-minutes",
       "ephemeral: the timeout-minutes of the job that runs on the MicroVM (default 360, "
       "GitHub's); bounds the VM's life when no stop step runs"},
      {"server", "warm: a server name (a pool with state-table), or an lmvm1_ handle to resume"},
      {"max-lifetime-seconds", "warm: the MicroVM's lifetime (default 7200, at most 28800)"},
      {"reuse-safety-margin-seconds", "warm: no new job this close to the lifetime (default 1800)"},
      {"state-table",
       "the state store (sqlite:PATH or dynamodb:TABLE): a server pool's, or where an ephemeral "
       "start records its VM for mvr sweep"},
      {"server-capacity",
       "server pools: create a member only while fewer are active (default: no bound)"},
      {"lease-timeout-seconds",
       "server pools: when an abandoned lease may be reclaimed (default: max-lifetime-seconds)"},
  };
  return kFlags;
}

const std::vector<FlagDoc>& StopFlags() {
  static const std::vector<FlagDoc> kFlags = {
      {"repository", "owner/name (default: GITHUB_REPOSITORY)", kRuntime},
      {"repository-id",
       "numeric repository id, checked against a warm handle's (default: GITHUB_REPOSITORY_ID)",
       kRuntime},
      {"github-api-url", "GitHub API base URL (default: GITHUB_API_URL or https://api.github.com)",
       kRuntime},
      {"region", "AWS region (default: AWS_REGION)"},
      {"microvm-id", "ephemeral: the MicroVM start gave"},
      {"runner-id", "the runner start registered (removed if still registered and idle)"},
      {"server", "warm: the lmvm1_ or lmvm2_ handle start gave"},
      {"stop-timeout-seconds", "deadline for the stop (default 300)"},
      {"state-table",
       "the state store the start used (lmvm2_ handles; ephemeral: its record is removed)"},
      {"server-capacity", "ignored by stop (accepted so one set of inputs serves both modes)"},
      {"lease-timeout-seconds", "ignored by stop"},
  };
  return kFlags;
}

}  // namespace mvr::action
