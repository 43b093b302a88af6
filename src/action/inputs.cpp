#include "action/inputs.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "action/flags.h"
#include "action/input_rules.h"
#include "action/server_handle.h"
#include "base/numbers.h"
#include "fleet/network_connectors.h"
#include "github/platform_labels.h"

namespace mvr::action {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// The names of a mode's flags, and the token every mode reads.
std::vector<std::string> NamesOf(const std::vector<FlagDoc>& flags) {
  std::vector<std::string> names = {"github-token"};
  for (const FlagDoc& f : flags) names.push_back(f.name);
  return names;
}

// The pool inputs of start: state-table needs a human server name; capacity and lease timeout
// mean nothing without a state table.
Status ParsePoolInputs(const InputReader& in, StartCommand& c) {
  c.state_table = in.Get("state-table");
  if (c.state_table.empty()) {
    for (const char* name : {"server-capacity", "lease-timeout-seconds"}) {
      if (in.Has(name)) {
        return InvalidArgument(std::string("input '") + name +
                               "' applies to server pools only: give 'state-table' (and a server "
                               "name) too, or remove it");
      }
    }
    return Status::Ok();
  }
  if (c.server.empty()) {
    // An ephemeral start records its VM there for `mvr sweep`; the pool inputs mean nothing.
    for (const char* name : {"server-capacity", "lease-timeout-seconds"}) {
      if (in.Has(name)) {
        return InvalidArgument(std::string("input '") + name +
                               "' applies to server pools only: give 'server' (the pool's name) "
                               "too, or remove it");
      }
    }
    return Status::Ok();
  }
  if (c.server.rfind("lmvm", 0) == 0) {
    return InvalidArgument(
        "with 'state-table', start takes the pool's server name, not a handle: pass the same "
        "name every start uses (the handle is for stop)");
  }
  if (in.Has("server-capacity")) {
    MVR_ASSIGN_OR_RETURN(int64_t capacity, in.GetInt("server-capacity", 0, 1, 1'000));
    c.server_capacity = capacity;
  }
  MVR_ASSIGN_OR_RETURN(c.lease_timeout_seconds,
                       in.GetInt("lease-timeout-seconds", c.lifetime.max_lifetime_seconds, 60,
                                 kMaxLifetimeCeilingSeconds));
  return Status::Ok();
}

}  // namespace

Result<Endpoints> ParseEndpoints(const InputReader& in) {
  Endpoints e;
  e.repository =
      in.Has("repository") ? in.Get("repository") : in.env().GetOr("GITHUB_REPOSITORY", "");
  if (e.repository.empty() || e.repository.find('/') == std::string::npos) {
    return InvalidArgument(
        "the repository (owner/name) is unknown: run inside GitHub Actions "
        "(GITHUB_REPOSITORY) or pass --repository owner/name");
  }
  e.github_api_url = in.Has("github-api-url")
                         ? in.Get("github-api-url")
                         : in.env().GetOr("GITHUB_API_URL", "https://api.github.com");
  e.github_token = Secret(in.Get("github-token"));
  if (e.github_token.empty()) {
    return InvalidArgument(
        "input 'github-token' is required: a token that may administer the "
        "repository's self-hosted runners");
  }
  e.region = in.Has("region")
                 ? in.Get("region")
                 : in.env().GetOr("AWS_REGION", in.env().GetOr("AWS_DEFAULT_REGION", ""));
  if (e.region.empty()) {
    return InvalidArgument("input 'region' is required (or set AWS_REGION)");
  }
  return e;
}

namespace {

// A connectors input: unset, `fallback` (one of AWS's managed connectors) of `region`; "none", no
// list; else each entry an ARN or a managed connector's name, which becomes its ARN.
Result<std::vector<std::string>> ConnectorInput(const InputReader& in, const std::string& name,
                                                const std::string& region, const char* fallback) {
  std::vector<std::string> given = in.GetList(name);
  if (given.empty()) given = {fallback};
  if (given.size() == 1 && given[0] == "none") return std::vector<std::string>{};
  return fleet::ResolveConnectors(given, region, "input '" + name + "'");
}

}  // namespace

std::string InputReader::Get(const std::string& name) const {
  auto it = flags_.find(name);
  if (it != flags_.end() && !Trim(it->second).empty()) return Trim(it->second);
  std::string upper = Upper(name);
  if (auto v = env_.Get("INPUT_" + upper); v && !Trim(*v).empty()) return Trim(*v);
  std::replace(upper.begin(), upper.end(), '-', '_');
  if (auto v = env_.Get("INPUT_" + upper); v && !Trim(*v).empty()) return Trim(*v);
  return "";
}

Result<int64_t> InputReader::GetInt(const std::string& name, int64_t fallback, int64_t min,
                                    int64_t max) const {
  std::string text = Get(name);
  if (text.empty()) return fallback;
  std::optional<int64_t> parsed = ParseInt64(text);
  if (!parsed) {
    return InvalidArgument("input '" + name + "' must be a whole number; got '" + text + "'");
  }
  const int64_t v = *parsed;
  if (v < min || v > max) {
    return InvalidArgument("input '" + name + "' must be between " + std::to_string(min) + " and " +
                           std::to_string(max) + "; got " + text);
  }
  return v;
}

std::vector<std::string> InputReader::GetList(const std::string& name) const {
  std::vector<std::string> out;
  std::string text = Get(name), item;
  for (char c : text + ",") {
    if (c == ',' || c == '\n') {
      item = Trim(item);
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item.push_back(c);
    }
  }
  return out;
}

Result<StartCommand> ParseStart(const InputReader& in, const std::string& event_json) {
  MVR_RETURN_IF_ERROR(CheckInputs(in, NamesOf(StartFlags())));
  if (in.Has("microvm-id")) {
    return InvalidArgument(
        "input 'microvm-id' is for mode 'stop'; a start creates its own "
        "MicroVM (pass 'server' to reuse a warm one)");
  }
  StartCommand c;
  MVR_ASSIGN_OR_RETURN(c.endpoints, ParseEndpoints(in));
  c.identity.repository_id = in.Has("repository-id") ? in.Get("repository-id")
                                                     : in.env().GetOr("GITHUB_REPOSITORY_ID", "");
  c.identity.run_id = in.Has("run-id") ? in.Get("run-id") : in.env().GetOr("GITHUB_RUN_ID", "");
  c.identity.run_attempt =
      in.Has("run-attempt") ? in.Get("run-attempt") : in.env().GetOr("GITHUB_RUN_ATTEMPT", "1");
  c.identity.job = in.Has("job") ? in.Get("job") : in.env().GetOr("GITHUB_JOB", "");
  MVR_ASSIGN_OR_RETURN(
      MatrixLeg leg,
      CanonicalMatrixLeg(
          in.Has("strategy") ? in.Get("strategy") : in.env().GetOr("MVR_STRATEGY", ""),
          in.Has("matrix") ? in.Get("matrix") : in.env().GetOr("MVR_MATRIX", "")));
  c.identity.job_index = leg.job_index;
  c.identity.matrix = leg.matrix;
  c.identity.step = in.Has("step") ? in.Get("step") : in.env().GetOr("GITHUB_ACTION", "");
  c.identity.idempotency_key = in.Get("idempotency-key");
  c.image_id = in.Get("image-id");
  if (c.image_id.empty() && !in.Has("server")) {
    return InvalidArgument("input 'image-id' is required: the MicroVM image (ID or ARN) to run");
  }
  c.image_version = in.Get("image-version");
  c.execution_role_arn = in.Get("execution-role-arn");
  c.log_group = in.Get("log-group");
  MVR_ASSIGN_OR_RETURN(c.ingress_connectors,
                       ConnectorInput(in, "ingress-connectors", c.endpoints.region,
                                      fleet::kDefaultIngressConnector));
  MVR_ASSIGN_OR_RETURN(
      c.egress_connectors,
      ConnectorInput(in, "egress-connectors", c.endpoints.region, fleet::kDefaultEgressConnector));
  MVR_ASSIGN_OR_RETURN(c.runner_group_id, in.GetInt("runner-group-id", 1, 1, INT64_MAX));
  c.extra_labels = in.GetList("runner-labels");
  if (c.extra_labels.size() > 90) {
    return InvalidArgument(
        "input 'runner-labels' has more than 90 labels; GitHub allows 100 "
        "per runner and mvr adds its own");
  }
  if (std::optional<std::string> foreign = github::ForeignPlatformLabel(c.extra_labels)) {
    return InvalidArgument("input 'runner-labels': \"" + *foreign +
                           "\" names an architecture or OS a MicroVM is not (Lambda MicroVMs "
                           "are ARM64 Linux only); the runner is registered with self-hosted, "
                           "linux and ARM64 already: remove it, and run jobs that need it on "
                           "other runners");
  }
  MVR_ASSIGN_OR_RETURN(int64_t startup, in.GetInt("startup-timeout-seconds", 300, 10, 3'600));
  c.startup_timeout = std::chrono::seconds(startup);
  c.server = in.Get("server");
  MVR_ASSIGN_OR_RETURN(
      c.lifetime.max_lifetime_seconds,
      in.GetInt("max-lifetime-seconds", kDefaultMaxLifetimeSeconds, 1, kMaxLifetimeCeilingSeconds));
  MVR_ASSIGN_OR_RETURN(c.lifetime.reuse_margin_seconds,
                       in.GetInt("reuse-safety-margin-seconds", kDefaultReuseMarginSeconds, 0,
                                 kMaxLifetimeCeilingSeconds));
  MVR_RETURN_IF_ERROR(ValidateLifetimePolicy(c.lifetime));
  // The job's timeout-minutes is not in the Actions runtime's contexts or environment (and the
  // job that runs on the VM is another job than this step's): the workflow passes it.
  MVR_ASSIGN_OR_RETURN(int64_t job_timeout_minutes,
                       in.GetInt("job-timeout-minutes", kDefaultJobTimeoutMinutes, 1,
                                 kMaxLifetimeCeilingSeconds / 60));
  MVR_ASSIGN_OR_RETURN(c.ephemeral_max_lifetime_seconds,
                       in.GetInt("ephemeral-max-lifetime-seconds",
                                 EphemeralMaxLifetimeSeconds(job_timeout_minutes, startup), 60,
                                 kMaxLifetimeCeilingSeconds));
  c.event_name = in.env().GetOr("GITHUB_EVENT_NAME", "");
  c.event_json = event_json;
  if (c.image_id.empty() && c.warm() && c.server.rfind("lmvm", 0) != 0) {
    return InvalidArgument("input 'image-id' is required to start a new warm server");
  }
  MVR_RETURN_IF_ERROR(ParsePoolInputs(in, c));
  return c;
}

Result<StopCommand> ParseStop(const InputReader& in) {
  MVR_RETURN_IF_ERROR(CheckInputs(in, NamesOf(StopFlags())));
  StopCommand c;
  // server-capacity and lease-timeout-seconds mean nothing to a stop and are ignored.
  c.state_table = in.Get("state-table");
  c.microvm_id = in.Get("microvm-id");
  c.server = in.Get("server");
  MVR_ASSIGN_OR_RETURN(c.runner_id, in.GetInt("runner-id", 0, 0, INT64_MAX));
  if (!c.microvm_id.empty() && !c.server.empty()) {
    return InvalidArgument(
        "give either 'microvm-id' (ephemeral) or 'server' (warm) to stop, "
        "not both");
  }
  if (c.empty()) return c;  // nothing to stop; the caller says so and exits 0
  if (c.server.rfind(kHandlePrefixV2, 0) == 0 && c.state_table.empty()) {
    return InvalidArgument(
        "the server handle is a server pool lease (lmvm2_): give 'state-table', the same one its "
        "start used");
  }
  MVR_ASSIGN_OR_RETURN(c.endpoints, ParseEndpoints(in));
  c.repository_id = in.Has("repository-id") ? in.Get("repository-id")
                                            : in.env().GetOr("GITHUB_REPOSITORY_ID", "");
  if (!c.microvm_id.empty() && !c.state_table.empty() && c.repository_id.empty()) {
    return InvalidArgument(
        "with 'state-table', an ephemeral stop removes its VM's record, which is kept under the "
        "repository id: run inside GitHub Actions (GITHUB_REPOSITORY_ID) or pass --repository-id");
  }
  MVR_ASSIGN_OR_RETURN(int64_t timeout, in.GetInt("stop-timeout-seconds", 300, 10, 3'600));
  c.stop_timeout = std::chrono::seconds(timeout);
  return c;
}

}  // namespace mvr::action
