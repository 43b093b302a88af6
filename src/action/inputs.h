// Action inputs: read as the Actions runtime passes them (INPUT_<NAME> environment variables,
// with the input's hyphens kept or turned into underscores) or as command-line flags (which win),
// and parsed into a typed StartCommand or StopCommand. Conflicting or out-of-range inputs are
// InvalidArgument naming the input and what to do.
// Thread-safety: plain values and pure functions over the given Environment.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "action/identity.h"
#include "action/lifetime.h"
#include "base/clock.h"
#include "base/environment.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::action {

class InputReader {
 public:
  InputReader(const Environment& env, std::map<std::string, std::string> flags)
      : env_(env), flags_(std::move(flags)) {}

  // The flag, else INPUT_<NAME> (upper case, hyphens kept), else INPUT_<NAME_>; trimmed; "" when
  // unset.
  std::string Get(const std::string& name) const;
  bool Has(const std::string& name) const { return !Get(name).empty(); }
  // An integer input in [min, max]; `fallback` when unset.
  Result<int64_t> GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  // A comma- or newline-separated list, entries trimmed, empties dropped.
  std::vector<std::string> GetList(const std::string& name) const;
  const Environment& env() const { return env_; }

 private:
  const Environment& env_;
  std::map<std::string, std::string> flags_;
};

// What both start and stop need to reach GitHub and AWS.
struct Endpoints {
  std::string repository;      // owner/name (GITHUB_REPOSITORY)
  std::string github_api_url;  // GITHUB_API_URL or https://api.github.com
  Secret github_token;
  std::string region;  // AWS region of the MicroVMs
};

struct StartCommand {
  Endpoints endpoints;
  JobIdentity identity;
  std::string image_id;
  std::string image_version;  // empty: the latest ACTIVE version
  std::string execution_role_arn;
  std::string log_group;
  // RunMicrovm's network connectors, as ARNs: AWS's managed ALL_INGRESS / INTERNET_EGRESS of the
  // region unless the inputs name others ("none": an empty list).
  std::vector<std::string> ingress_connectors;
  std::vector<std::string> egress_connectors;
  // image_id's ARN when known (RunMicrovm gets it); "": resolved at launch (LaunchRequest).
  std::string image_arn;
  int64_t runner_group_id = 1;
  std::vector<std::string> extra_labels;
  Duration startup_timeout{300'000};
  std::string server;       // empty: ephemeral; a name: new warm VM; an lmvm1_ handle: resume it
  LifetimePolicy lifetime;  // warm
  // RunMicrovm's maximumDurationInSeconds of an ephemeral VM: ephemeral-max-lifetime-seconds, or
  // EphemeralMaxLifetimeSeconds(job-timeout-minutes, startup timeout) when it is not given.
  int64_t ephemeral_max_lifetime_seconds = kMaxLifetimeCeilingSeconds;
  std::string event_name;  // GITHUB_EVENT_NAME, for the warm trust check
  std::string event_json;  // the payload at GITHUB_EVENT_PATH ("" if none)
  std::string work_folder = "_work";
  // Server pools (with a server name): the store URI, this request's capacity (nullopt: no bound)
  // and the abandoned-lease deadline.
  std::string state_table;
  std::optional<int64_t> server_capacity;
  int64_t lease_timeout_seconds = kDefaultMaxLifetimeSeconds;

  bool warm() const { return !server.empty(); }
  // Warm with a state table: a server pool. Ephemeral with one: the VM is recorded for `mvr sweep`.
  bool pooled() const { return warm() && !state_table.empty(); }
};

struct StopCommand {
  Endpoints endpoints;
  std::string microvm_id;  // ephemeral stop
  std::string server;      // warm stop: the lmvm1_ or lmvm2_ handle start gave
  // The store URI: a pool's (lmvm2_ handles), or where an ephemeral start recorded its VM (the
  // stop removes the record).
  std::string state_table;
  int64_t runner_id = 0;  // optional (0 = none): the runner start registered (ephemeral cleanup)
  std::string repository_id;  // GITHUB_REPOSITORY_ID: a warm handle must name the same
  Duration stop_timeout{300'000};

  // Start was cancelled or failed before giving outputs: nothing to stop.
  bool empty() const { return microvm_id.empty() && server.empty(); }
};

// The repository, GitHub API, token and region every command needs; InvalidArgument naming
// what is missing.
Result<Endpoints> ParseEndpoints(const InputReader& in);
Result<StartCommand> ParseStart(const InputReader& in, const std::string& event_json);
Result<StopCommand> ParseStop(const InputReader& in);

}  // namespace mvr::action
