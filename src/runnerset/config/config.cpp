#include "runnerset/config/config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "base/files.h"
#include "base/host_port.h"
#include "base/json_fields.h"
#include "fleet/network_connectors.h"
#include "github/labels.h"
#include "github/types.h"
#include "runnerset/config/config_reader.h"
#include "runnerset/config/runner_name.h"

namespace mvr::runnerset {
namespace {

using config_internal::json;
using config_internal::kMaxSettingBytes;
using config_internal::ObjectAt;
using config_internal::ParseGitHubSettings;
using config_internal::Strict;

// {"target": {"p95QueuedToStartedSeconds": 10}, "max": 20} (pool_target.h).
Status ParsePoolTarget(const json& v, const std::string& key, PoolTarget& target) {
  Strict o(v, key);
  const json* t = o.Find("target");
  if (!t || !t->is_object()) {
    return InvalidArgument(o.Key("target") +
                           ": expected {\"p95QueuedToStartedSeconds\": 10}, the start time the "
                           "pool is sized to meet");
  }
  Strict inner(*t, o.Key("target"));
  if (!inner.Find("p95QueuedToStartedSeconds")) {
    return InvalidArgument(inner.Key("p95QueuedToStartedSeconds") + ": required");
  }
  MVR_RETURN_IF_ERROR(
      inner.Integer("p95QueuedToStartedSeconds", target.p95_queued_to_started_seconds, 1, 3600));
  MVR_RETURN_IF_ERROR(inner.NoOthers());
  MVR_RETURN_IF_ERROR(o.Integer("max", target.max, 1, 1000));
  return o.NoOthers();
}

// warmPoolSize / hotPoolSize: a number, a list of {cron, timezone, size} windows (the first
// that matches the current minute gives the size; pool_schedule.h), or a target (pool_target.h).
// With windows, `fixed` becomes the largest size any window gives (what "the class has a pool"
// means); with a target, its max.
Status ParsePoolSize(Strict& s, const std::string& name, int& fixed,
                     std::vector<PoolWindow>& windows, PoolTarget& target) {
  const json* v = s.Find(name);
  if (v && v->is_object()) {
    MVR_RETURN_IF_ERROR(ParsePoolTarget(*v, s.Key(name), target));
    fixed = target.max;
    return Status::Ok();
  }
  if (!v || !v->is_array()) return s.Integer(name, fixed, 0, 1000);
  if (v->empty() || v->size() > 50) {
    return InvalidArgument(s.Key(name) + ": expected a number, or a list of 1 to 50 windows " +
                           "{\"cron\": \"* 8-18 * * MON-FRI\", \"timezone\": \"Europe/Berlin\", " +
                           "\"size\": 5}");
  }
  fixed = 0;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string key = s.Key(name) + "[" + std::to_string(i) + "]";
    if (!(*v)[i].is_object()) return InvalidArgument(key + ": expected an object");
    Strict w((*v)[i], key);
    PoolWindow window;
    std::string zone = "UTC";
    MVR_RETURN_IF_ERROR(w.String("cron", window.cron_text, true));
    MVR_RETURN_IF_ERROR(w.String("timezone", zone));
    if (!w.Find("size")) return InvalidArgument(w.Key("size") + ": required");
    MVR_RETURN_IF_ERROR(w.Integer("size", window.size, 0, 1000));
    MVR_RETURN_IF_ERROR(w.NoOthers());
    Result<CronSchedule> cron = CronSchedule::Parse(window.cron_text);
    if (!cron.ok()) return InvalidArgument(w.Key("cron") + ": " + cron.status().message());
    Result<TimeZone> tz = TimeZone::Load(zone);
    if (!tz.ok()) return InvalidArgument(w.Key("timezone") + ": " + tz.status().message());
    window.cron = *cron;
    window.zone = *tz;
    fixed = std::max(fixed, window.size);
    windows.push_back(std::move(window));
  }
  return Status::Ok();
}

// A list of network connectors (fleet/network_connectors.h); absent leaves `out` unset.
Status ParseConnectors(Strict& s, const std::string& name,
                       std::optional<std::vector<std::string>>& out) {
  if (!s.Find(name)) return Status::Ok();
  std::vector<std::string> list;
  MVR_RETURN_IF_ERROR(s.Strings(name, list));
  MVR_RETURN_IF_ERROR(fleet::CheckConnectors(list, s.Key(name)));
  out = std::move(list);
  return Status::Ok();
}

// classes[].circuitBreaker (`b`, at `key`; absent: off): {"failures": N, "windowSeconds": W,
// "pauseSeconds": P}.
Status ParseBreaker(const json* b, const std::string& key, RunnerClass& c) {
  if (!b) return Status::Ok();
  if (!b->is_object()) {
    return InvalidArgument(key + ": expected an object {\"failures\": 3, \"windowSeconds\": " +
                           "600, \"pauseSeconds\": 900}");
  }
  Strict cb(*b, key);
  if (!cb.Find("failures")) {
    return InvalidArgument(cb.Key("failures") + ": required (how many VM failures within " +
                           "windowSeconds pause the class)");
  }
  MVR_RETURN_IF_ERROR(cb.Integer("failures", c.breaker_failures, 1, 1000));
  MVR_RETURN_IF_ERROR(cb.Integer("windowSeconds", c.breaker_window_seconds, 10, 86400));
  MVR_RETURN_IF_ERROR(cb.Integer("pauseSeconds", c.breaker_pause_seconds, 2, 86400));
  return cb.NoOthers();
}

Status ParseClass(const json& j, const std::string& key, RunnerClass& c) {
  if (!j.is_object()) return InvalidArgument(key + ": expected an object");
  Strict s(j, key);
  MVR_RETURN_IF_ERROR(s.String("label", c.label, true));
  MVR_RETURN_IF_ERROR(s.String("image", c.image, true));
  MVR_RETURN_IF_ERROR(s.String("size", c.size));
  MVR_RETURN_IF_ERROR(s.String("imageVersion", c.image_version));
  MVR_RETURN_IF_ERROR(s.Integer("maxDurationSeconds", c.max_duration_seconds, 1, 28800));
  MVR_RETURN_IF_ERROR(
      ParsePoolSize(s, "warmPoolSize", c.warm_pool_size, c.warm_pool_windows, c.warm_pool_target));
  MVR_RETURN_IF_ERROR(
      ParsePoolSize(s, "hotPoolSize", c.hot_pool_size, c.hot_pool_windows, c.hot_pool_target));
  if (c.warm_pool_target.set() && c.hot_pool_target.set()) {
    return InvalidArgument(s.Key("warmPoolSize") + " / " + s.Key("hotPoolSize") +
                           ": give a target to one pool of a class; the other takes a size");
  }
  MVR_RETURN_IF_ERROR(ParseConnectors(s, "ingressConnectors", c.ingress_connectors));
  MVR_RETURN_IF_ERROR(ParseConnectors(s, "egressConnectors", c.egress_connectors));
  MVR_RETURN_IF_ERROR(s.String("fallbackClass", c.fallback_class));
  MVR_RETURN_IF_ERROR(ParseBreaker(s.Find("circuitBreaker"), s.Key("circuitBreaker"), c));
  MVR_RETURN_IF_ERROR(s.Strings("labels", c.labels));
  MVR_RETURN_IF_ERROR(s.String("architecture", c.architecture));
  MVR_RETURN_IF_ERROR(CheckArchitecture(c, key));
  std::string match;
  MVR_RETURN_IF_ERROR(s.String("labelMatch", match));
  if (!match.empty()) {
    std::optional<LabelMatch> m = ParseLabelMatch(match);
    if (!m) {
      return InvalidArgument(s.Key("labelMatch") +
                             ": expected \"any\", \"all\" or \"exact\", got \"" + match + "\"");
    }
    c.label_match = *m;
  }
  return s.NoOthers();
}

Status ParseQueue(const json& j, QueueSettings& q) {
  if (j.is_string()) {
    q.uri = j.get<std::string>();
  } else if (j.is_object()) {
    Strict s(j, "queue");
    MVR_RETURN_IF_ERROR(s.String("uri", q.uri, true));
    MVR_RETURN_IF_ERROR(s.Integer("maxReceiveCount", q.max_receive_count, 1, 1000));
    MVR_RETURN_IF_ERROR(
        s.Integer("visibilityTimeoutSeconds", q.visibility_timeout_seconds, 1, 43200));
    MVR_RETURN_IF_ERROR(s.NoOthers());
  } else {
    return InvalidArgument("queue: expected a queue URI or an object with \"uri\"");
  }
  if (q.uri.empty()) return InvalidArgument("queue: must not be empty");
  return Status::Ok();
}

// `lambda`: the Lambda functions' reserved concurrency (issue 53, item 7). The launcher's is at
// least 5: the SQS event source mapping polls with five functions at once.
Status ParseLambda(const json& j, ServeConfig& c) {
  Strict s(j, "lambda");
  MVR_RETURN_IF_ERROR(
      s.Integer("webhookReservedConcurrency", c.webhook_reserved_concurrency, 1, 1000));
  MVR_RETURN_IF_ERROR(
      s.Integer("launcherReservedConcurrency", c.launcher_reserved_concurrency, 5, 1000));
  return s.NoOthers();
}

Status ParseLauncher(const json& j, LauncherSettings& l) {
  Strict s(j, "launcher");
  MVR_RETURN_IF_ERROR(s.Integer("concurrency", l.concurrency, 1, 256));
  MVR_RETURN_IF_ERROR(s.Integer("launchTimeoutSeconds", l.launch_timeout_seconds, 5, 3600));
  MVR_RETURN_IF_ERROR(s.Integer("claimTakeoverSeconds", l.claim_takeover_seconds, 1, 86400));
  MVR_RETURN_IF_ERROR(s.Integer("deferSeconds", l.defer_seconds, 1, 900));
  MVR_RETURN_IF_ERROR(s.Number("runMicrovmPerSecond", l.run_microvm_per_second, 0.1, 1000));
  MVR_RETURN_IF_ERROR(s.Integer("jitConfigsPerMinute", l.jit_configs_per_minute, 1, 10000));
  MVR_RETURN_IF_ERROR(s.Integer("capReconcileSeconds", l.cap_reconcile_seconds, 1, 3600));
  MVR_RETURN_IF_ERROR(s.String("executionRoleArn", l.execution_role_arn));
  if (const json* f = s.Find("fairShare")) MVR_RETURN_IF_ERROR(ParseFairShare(*f, l.fair_share));
  return s.NoOthers();
}

Status ParseJanitor(const json& j, JanitorSettings& t) {
  Strict s(j, "janitor");
  MVR_RETURN_IF_ERROR(s.Integer("intervalSeconds", t.interval_seconds, 0, 86400));
  MVR_RETURN_IF_ERROR(s.Integer("strikes", t.strikes, 1, 100));
  MVR_RETURN_IF_ERROR(s.Integer("graceSeconds", t.grace_seconds, 0, 86400));
  MVR_RETURN_IF_ERROR(s.Integer("keepImageVersions", t.keep_image_versions, 0, 1000));
  MVR_RETURN_IF_ERROR(s.Integer("stuckLaunchSeconds", t.stuck_launch_seconds, 0, 86400));
  MVR_RETURN_IF_ERROR(s.Integer("scanEverySweeps", t.scan_every_sweeps, 1, 10000));
  MVR_RETURN_IF_ERROR(s.Integer("rerunMaxMinutes", t.rerun_max_minutes, 1, 7 * 24 * 60));
  MVR_RETURN_IF_ERROR(s.Integer("wedgedRunnerSeconds", t.wedged_runner_seconds, 0, 86400));
  for (auto [name, flag] :
       {std::pair<const char*, bool*>{"pruneImageVersions", &t.prune_image_versions},
        {"recoverStuckLaunches", &t.recover_stuck_launches},
        {"rerunLostJobs", &t.rerun_lost_jobs}}) {
    if (const json* v = s.Find(name)) {
      if (!v->is_boolean()) return InvalidArgument(s.Key(name) + ": expected true or false");
      *flag = v->get<bool>();
    }
  }
  return s.NoOthers();
}

Status ParseWarmPool(const json& j, WarmPoolSettings& w) {
  Strict s(j, "warmPool");
  MVR_RETURN_IF_ERROR(s.Integer("intervalSeconds", w.interval_seconds, 0, 86400));
  MVR_RETURN_IF_ERROR(s.Integer("replaceBeforeSeconds", w.replace_before_seconds, 0, 28800));
  MVR_RETURN_IF_ERROR(s.Integer("bootTimeoutSeconds", w.boot_timeout_seconds, 10, 3600));
  return s.NoOthers();
}

Status ParseHotPool(const json& j, HotPoolSettings& h) {
  Strict s(j, "hotPool");
  // GitHub removes an ephemeral runner that has not connected for more than a day.
  MVR_RETURN_IF_ERROR(s.Integer("maxAgeSeconds", h.max_age_seconds, 60, 86400 - 3600));
  return s.NoOthers();
}

// A hot member must be retired before its VM's maximum duration, less the reserve a job needs.
Status CheckHotPools(const ServeConfig& c) {
  for (size_t i = 0; i < c.classes.size(); ++i) {
    const RunnerClass& rc = c.classes[i];
    if (rc.hot_pool_size <= 0) continue;
    const int64_t usable = rc.max_duration_seconds - c.warm_pool.replace_before_seconds;
    if (usable < 60) {
      return InvalidArgument(
          "classes[" + std::to_string(i) + "].hotPoolSize: the class's maxDurationSeconds (" +
          std::to_string(rc.max_duration_seconds) + ") less warmPool.replaceBeforeSeconds (" +
          std::to_string(c.warm_pool.replace_before_seconds) +
          ") leaves a hot member under a minute to wait for a job; raise "
          "maxDurationSeconds or lower replaceBeforeSeconds");
    }
  }
  return Status::Ok();
}

bool IsRunnerNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// listen and statusListen: HOST:PORT each, and not the same address (the status routes must not
// share the webhook's listener). An unset statusListen follows listen (config.h).
Status CheckStatusListen(ServeConfig& c) {
  MVR_ASSIGN_OR_RETURN(HostPort webhook, ParseHostPort(c.listen, "listen"));
  if (c.status_listen.empty()) {
    if (webhook.port == 65535) {
      return InvalidArgument(
          "statusListen: required when listen's port is 65535 (the status "
          "routes listen on the port after listen's by default)");
    }
    c.status_listen = "127.0.0.1:" + std::to_string(webhook.port == 0 ? 0 : webhook.port + 1);
  }
  MVR_ASSIGN_OR_RETURN(HostPort status, ParseHostPort(c.status_listen, "statusListen"));
  if (status.port != 0 && status.port == webhook.port) {
    return InvalidArgument("statusListen: " + c.status_listen + " uses listen's port " +
                           std::to_string(webhook.port) +
                           "; the status routes need a listener of their own (another port)");
  }
  return Status::Ok();
}

Status CheckPrefix(const ServeConfig& c) {
  const std::string& p = c.runner_name_prefix;
  if (p.empty()) return InvalidArgument("runnerNamePrefix: must not be empty");
  for (char ch : p) {
    if (!IsRunnerNameChar(ch)) {
      return InvalidArgument("runnerNamePrefix: only letters, digits, '-', '_' and '.' (got \"" +
                             p + "\")");
    }
  }
  // <prefix><job id, up to 19 digits>-<8 hex> must fit GitHub's 64-character runner names.
  if (p.size() > 64 - 28) {
    return InvalidArgument(
        "runnerNamePrefix: at most 36 characters (runner names are limited to "
        "64 and carry the job id and an attempt suffix)");
  }
  return Status::Ok();
}

// classes: a non-empty array of runner classes, each label used once.
Status ParseClasses(const json* classes, ServeConfig& c) {
  if (!classes || !classes->is_array() || classes->empty()) {
    return InvalidArgument("classes: required, a non-empty array of {label, image}");
  }
  for (size_t i = 0; i < classes->size(); ++i) {
    RunnerClass rc;
    const std::string key = "classes[" + std::to_string(i) + "]";
    MVR_RETURN_IF_ERROR(ParseClass((*classes)[i], key, rc));
    if (c.FindClass(rc.label)) {
      return InvalidArgument(key + ".label: \"" + rc.label + "\" is used by another class");
    }
    c.classes.push_back(rc);
  }
  return Status::Ok();
}

// The optional sections of the functions' settings: launcher, lambda, janitor, warmPool, hotPool.
Status ParseSections(Strict& s, ServeConfig& c) {
  if (const json* l = s.Find("launcher")) {
    MVR_RETURN_IF_ERROR(ObjectAt(l, "launcher"));
    MVR_RETURN_IF_ERROR(ParseLauncher(*l, c.launcher));
  }
  if (const json* l = s.Find("lambda")) {
    MVR_RETURN_IF_ERROR(ObjectAt(l, "lambda"));
    MVR_RETURN_IF_ERROR(ParseLambda(*l, c));
  }
  if (const json* t = s.Find("janitor")) {
    MVR_RETURN_IF_ERROR(ObjectAt(t, "janitor"));
    MVR_RETURN_IF_ERROR(ParseJanitor(*t, c.janitor));
  }
  if (const json* w = s.Find("warmPool")) {
    MVR_RETURN_IF_ERROR(ObjectAt(w, "warmPool"));
    MVR_RETURN_IF_ERROR(ParseWarmPool(*w, c.warm_pool));
  }
  if (const json* h = s.Find("hotPool")) {
    MVR_RETURN_IF_ERROR(ObjectAt(h, "hotPool"));
    MVR_RETURN_IF_ERROR(ParseHotPool(*h, c.hot_pool));
  }
  return Status::Ok();
}

// launcher.claimTakeoverSeconds: never shorter than the launch timeout.
Status CheckClaimTakeover(const ServeConfig& c) {
  if (c.launcher.claim_takeover_seconds > 0 && c.claim_takeover_after() < c.launch_timeout()) {
    // Found by the simulation (lagging-listing seed 481, a 4 s takeover of 293 s launches):
    // a claim taken over while its launch still runs gives the job two VMs.
    return InvalidArgument(
        "launcher.claimTakeoverSeconds: " + std::to_string(c.launcher.claim_takeover_seconds) +
        " is shorter than launcher.launchTimeoutSeconds (" +
        std::to_string(c.launcher.launch_timeout_seconds) +
        "): a launch may still be working on a claim that young, and taking it over would give "
        "its job a second VM; set it to at least the launch timeout (the default is twice it)");
  }
  return Status::Ok();
}

}  // namespace

const RunnerClass* ServeConfig::FindClass(std::string_view label) const {
  for (const RunnerClass& c : classes) {
    if (github::LabelEquals(c.label, label)) return &c;
  }
  return nullptr;
}

github::RunnerScope RunnerScopeOf(const ServeConfig& c) {
  if (!c.github.enterprise.empty()) {
    return github::RunnerScope::Enterprise(c.github.enterprise, c.github.organizations);
  }
  if (!c.github.organization.empty()) {
    return github::RunnerScope::Organization(c.github.organization);
  }
  auto repo = github::RepositoryRef::Parse(c.github.repository);
  return github::RunnerScope::Repository(repo.ok() ? *repo : github::RepositoryRef{});
}

Duration ServeConfig::visibility_timeout() const {
  if (queue.visibility_timeout_seconds > 0) {
    return Duration(queue.visibility_timeout_seconds * 1000LL);
  }
  return launch_timeout() + Duration(60'000);
}

bool ServeConfig::any_pool() const {
  for (const RunnerClass& c : classes) {
    if (c.has_pool()) return true;
  }
  return false;
}

Duration ServeConfig::hot_member_max_age(const RunnerClass& cls) const {
  const int64_t vm_bound = cls.max_duration_seconds - warm_pool.replace_before_seconds;
  return Duration(std::min<int64_t>(hot_pool.max_age_seconds, vm_bound) * 1000LL);
}

Duration ServeConfig::claim_takeover_after() const {
  if (launcher.claim_takeover_seconds > 0) {
    return Duration(launcher.claim_takeover_seconds * 1000LL);
  }
  return 2 * launch_timeout();
}

Result<ServeConfig> ParseServeConfig(std::string_view text, const std::string& origin) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return InvalidArgument(origin + ": not valid JSON");
  if (!j.is_object()) return InvalidArgument(origin + ": expected a JSON object");
  MVR_RETURN_IF_ERROR(CheckConfigStrings(j, origin));
  ServeConfig c;
  Strict s(j, "");
  Status st = [&]() -> Status {
    MVR_RETURN_IF_ERROR(s.String("runnerSetId", c.runner_set_id, true));
    MVR_RETURN_IF_ERROR(s.String("listen", c.listen));
    MVR_RETURN_IF_ERROR(s.String("statusListen", c.status_listen));
    MVR_RETURN_IF_ERROR(s.String("statusTokenFile", c.status_token_file));
    MVR_RETURN_IF_ERROR(s.String("region", c.region));
    const json* gh = s.Find("github");
    if (!gh) return InvalidArgument("github: required");
    MVR_RETURN_IF_ERROR(ObjectAt(gh, "github"));
    MVR_RETURN_IF_ERROR(ParseGitHubSettings(*gh, c.github));
    MVR_RETURN_IF_ERROR(ParseClasses(s.Find("classes"), c));
    MVR_RETURN_IF_ERROR(s.Integer("maxConcurrentVms", c.max_concurrent_vms, 1, 100000));
    MVR_RETURN_IF_ERROR(s.String("store", c.store, true));
    const json* queue = s.Find("queue");
    if (!queue) return InvalidArgument("queue: required");
    MVR_RETURN_IF_ERROR(ParseQueue(*queue, c.queue));
    MVR_RETURN_IF_ERROR(s.String("runnerNamePrefix", c.runner_name_prefix));
    MVR_RETURN_IF_ERROR(ParseSections(s, c));
    MVR_RETURN_IF_ERROR(s.Integer("maxWebhookBodyBytes", c.max_webhook_body_bytes, 1024, 25 << 20));
    MVR_RETURN_IF_ERROR(s.Integer("shutdownGraceSeconds", c.shutdown_grace_seconds, 0, 3600));
    MVR_RETURN_IF_ERROR(s.NoOthers());
    MVR_RETURN_IF_ERROR(CheckRunnerSetId(c.runner_set_id, "runnerSetId"));
    if (c.runner_name_prefix.empty()) c.runner_name_prefix = RunnerNamePrefix(c.runner_set_id);
    MVR_RETURN_IF_ERROR(CheckPrefix(c));
    MVR_RETURN_IF_ERROR(CheckClaimTakeover(c));
    MVR_RETURN_IF_ERROR(CheckHotPools(c));
    MVR_RETURN_IF_ERROR(CheckFallbackClasses(c));
    MVR_RETURN_IF_ERROR(CheckAllowedRepositories(c.github));
    MVR_RETURN_IF_ERROR(CheckStatusListen(c));
    return Status::Ok();
  }();
  if (!st.ok()) return st.Annotate(origin);
  return c;
}

}  // namespace mvr::runnerset
