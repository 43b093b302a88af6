// The flags of `mvr emulate github`: what they fill (GithubFlags) and their registration, one
// function per section of the emulator's behaviour (emulate_github_command.cpp builds the
// emulator's options from them and runs it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "emulate/github/emulator.h"
#include "emulate/github/scaleset/scaleset_api.h"

namespace mvr::cli::github_flags {

namespace gh = mvr::emulate::github;

constexpr int64_t kHourMs = 3600LL * 1000;
constexpr int64_t kMonthSeconds = 30LL * 24 * 3600;

struct GithubFlags {
  std::string listen = "127.0.0.1:0";
  std::vector<std::string> repos;
  std::vector<std::string> orgs;
  std::string enterprise;
  std::vector<std::string> pats;
  std::string pat_file;
  // Several GitHub Apps: the k-th --app-id, --app-key-file and --installation-id go together.
  std::vector<int64_t> app_ids;
  std::vector<std::string> app_key_files;
  std::vector<int64_t> installation_ids;
  std::string webhook_url;
  std::string webhook_secret_file;
  std::string webhook_content_type = "json";
  std::vector<std::string> installation_permissions;  // NAME=LEVEL
  std::string installation_token_format = "stateless";
  int64_t rate_limit = 5000;
  int secondary_limit = 0;
  std::string rate_limits = "off";
  double rate_limit_time_scale = 1.0;
  std::vector<std::string> rate_limit_sets;  // NAME=N overrides of the secondary limits
  int64_t delay_min_ms = 0;
  int64_t delay_max_ms = 0;
  double loss = 0;
  double duplication = 0;
  double reorder = 0;
  int64_t reorder_delay_ms = 3000;
  int64_t queue_timeout_s = 24 * 3600;
  int64_t offline_after_s = 60;
  int64_t idle_expiry_s = 0;      // 0 = registrations never expire
  int64_t offline_expiry_s = 0;   // 0 = registrations never expire
  int64_t pickup_timeout_s = 60;  // 0 = a job stays with the runner it was handed to
  int64_t lost_runner_s = 600;    // 0 = a job whose runner went silent runs to its timeout
  double wedged_runners = 0;      // the runner picking up a job wedges with this probability
  int64_t tick_ms = 200;
  std::string arch = "ARM64";
  std::string record;
  double busy_lies = 0;
  std::string assignment = "oldest";
  double completed_loss = 0;
  int64_t approval_delay_s = 0;
  double foreign_deliveries = 0;
  int64_t foreign_installation_id = 999'001;
  std::string min_runner_version = gh::kGitHubMinRunnerVersion;  // GitHub refuses older runners
  std::string latest_runner_release;
  std::string latest_runner_released_at;  // RFC 3339
  std::vector<std::string> dispatch_workflows;
  gh::ScaleSetOptions scaleset;  // --scaleset-* (the runner scale-set API)
  int64_t scaleset_long_poll_ms = 50'000;
  int64_t scaleset_acquire_timeout_s = 60;
  int64_t scaleset_start_timeout_s = 300;
  int64_t scaleset_session_idle_s = 120;
  int64_t scaleset_message_delay_ms = 0;
};

// Each adds one section's flags to `g`, filling `f`.
void AddCredentialFlags(CLI::App& g, GithubFlags& f);
void AddWebhookFlags(CLI::App& g, GithubFlags& f);
void AddRateLimitFlags(CLI::App& g, GithubFlags& f);
void AddSchedulerFlags(CLI::App& g, GithubFlags& f);
void AddLostRunnerFlags(CLI::App& g, GithubFlags& f);
void AddFieldFaultFlags(CLI::App& g, GithubFlags& f);
void AddScaleSetFlags(CLI::App& g, GithubFlags& f);

}  // namespace mvr::cli::github_flags
