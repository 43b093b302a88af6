#include "emulate/microvms/model/model_options.h"

#include <algorithm>
#include <cmath>

#include "base/json_fields.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

namespace {

constexpr double kDayMs = 24.0 * 3600 * 1000;

// ingressAnswerDelayMs: {"/path": milliseconds, ...}.
Result<std::map<std::string, Duration>> ParseIngressAnswerDelays(const json& delays) {
  const std::string wrong =
      "ingressAnswerDelayMs must map request paths (each starting with '/', no query) to "
      "milliseconds from 0 to " +
      std::to_string(kMaxLatencyMs) + ", e.g. {\"/v1/runner/start\": 8000}";
  if (!delays.is_object()) return InvalidArgument(wrong);
  std::map<std::string, Duration> out;
  for (const auto& [path, ms] : delays.items()) {
    if (path.empty() || path[0] != '/' || path.find('?') != std::string::npos ||
        !ms.is_number_integer() || ms.get<int64_t>() < 0 || ms.get<int64_t>() > kMaxLatencyMs) {
      return InvalidArgument(wrong + " (not so: \"" + path.substr(0, 80) + "\")");
    }
    out[path] = Duration(ms.get<int64_t>());
  }
  return out;
}

// bootFailuresByImage: image name or ARN → the number of its first VMs that fail to boot.
Result<std::map<std::string, int>> ParseBootFailuresByImage(const json& failures) {
  const std::string wrong =
      "bootFailuresByImage must map image names or ARNs to how many of the first VMs launched "
      "from each fail to boot (0 to 1000000), e.g. {\"my-image\": 2}";
  if (!failures.is_object()) return InvalidArgument(wrong);
  std::map<std::string, int> out;
  for (const auto& [image, n] : failures.items()) {
    if (image.empty() || !n.is_number_integer() || n.get<int64_t>() < 0 ||
        n.get<int64_t>() > 1'000'000) {
      return InvalidArgument(wrong + " (not so: \"" + image.substr(0, 80) + "\")");
    }
    out[image] = n.get<int>();
  }
  return out;
}

}  // namespace

Duration MicrovmModelOptions::IngressAnswerDelay(std::string_view path) const {
  auto it = ingress_answer_delays.find(std::string(path));
  return it == ingress_answer_delays.end() ? Duration(0) : it->second;
}

Duration LatencyDistribution::Sample(Random& random) const {
  switch (kind) {
    case Kind::kFixed:
      return low;
    case Kind::kUniform: {
      const int64_t span = std::max<int64_t>(0, (high - low).count());
      return low + Duration(static_cast<int64_t>(random.Uniform(static_cast<uint64_t>(span) + 1)));
    }
    case Kind::kLogNormal: {
      // ln X ~ N(mu, sigma): median = e^mu, p90 = e^(mu + 1.2816 sigma).
      const double median = std::max<double>(1.0, static_cast<double>(low.count()));
      const double p90 = std::max<double>(median, static_cast<double>(high.count()));
      const double mu = std::log(median);
      const double sigma = (std::log(p90) - mu) / 1.2815515655446004;
      // Box-Muller from two uniform draws; 1 - u keeps the logarithm finite.
      const double u1 = 1.0 - random.UniformDouble();
      const double u2 = random.UniformDouble();
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      // The far tail is cut at a day, so the count of milliseconds stays in range.
      return Duration(static_cast<int64_t>(std::min(std::exp(mu + sigma * z), kDayMs)));
    }
  }
  return Duration(0);
}

Result<LatencyDistribution> LatencyDistribution::FromJson(const json& j, const std::string& where) {
  LatencyDistribution d;
  auto ms = [&](const json& v, const std::string& field) -> Result<Duration> {
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= kMaxLatencyMs)) {
      return InvalidArgument(where + "." + field + " must be a number of milliseconds from 0 to " +
                             std::to_string(kMaxLatencyMs));
    }
    return Duration(static_cast<int64_t>(v.get<double>()));
  };
  if (j.is_number()) {
    MVR_ASSIGN_OR_RETURN(d.low, ms(j, "fixedMs"));
    return d;
  }
  if (!j.is_object()) return InvalidArgument(where + " must be a number or an object");
  if (j.contains("fixedMs")) {
    MVR_ASSIGN_OR_RETURN(d.low, ms(j["fixedMs"], "fixedMs"));
  } else if (j.contains("uniformMs")) {
    const json& r = j["uniformMs"];
    if (!r.is_array() || r.size() != 2) {
      return InvalidArgument(where + ".uniformMs must be [low, high]");
    }
    d.kind = Kind::kUniform;
    MVR_ASSIGN_OR_RETURN(d.low, ms(r[0], "uniformMs[0]"));
    MVR_ASSIGN_OR_RETURN(d.high, ms(r[1], "uniformMs[1]"));
    if (d.high < d.low) return InvalidArgument(where + ".uniformMs must have low <= high");
  } else if (j.contains("p50Ms") && j.contains("p90Ms")) {
    d.kind = Kind::kLogNormal;
    MVR_ASSIGN_OR_RETURN(d.low, ms(j["p50Ms"], "p50Ms"));
    MVR_ASSIGN_OR_RETURN(d.high, ms(j["p90Ms"], "p90Ms"));
    if (d.high < d.low) return InvalidArgument(where + ".p90Ms must be >= p50Ms");
  } else {
    return InvalidArgument(where + " needs fixedMs, uniformMs or p50Ms and p90Ms");
  }
  return d;
}

TokenBucket::TokenBucket(RateLimit limit, TimePoint now)
    : limit_(limit), tokens_(limit.burst), last_(now) {}

std::optional<Duration> TokenBucket::TryTake(TimePoint now) {
  if (limit_.per_second <= 0) return std::nullopt;
  if (now > last_) {
    const double elapsed_s = static_cast<double>((now - last_).count()) / 1000.0;
    tokens_ = std::min(std::max(limit_.burst, 1.0), tokens_ + elapsed_s * limit_.per_second);
    last_ = now;
  }
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return std::nullopt;
  }
  const double wait_s = (1.0 - tokens_) / limit_.per_second;
  return Duration(static_cast<int64_t>(std::ceil(wait_s * 1000.0)));
}

namespace {

Status ReadProbability(const json& config, const char* key, double& out) {
  if (!config.contains(key)) return Status::Ok();
  const json& v = config[key];
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) {
    return InvalidArgument(std::string(key) + " must be a number from 0 to 1");
  }
  out = v.get<double>();
  return Status::Ok();
}

}  // namespace

const char* RunBodyName(RunBody body) {
  switch (body) {
    case RunBody::kEnvelope:
      return "envelope";
    case RunBody::kEnvelopeWithId:
      return "envelope-with-id";
    case RunBody::kRaw:
      break;
  }
  return "raw";
}

Result<RunBody> ParseRunBody(std::string_view text) {
  for (RunBody b : {RunBody::kRaw, RunBody::kEnvelope, RunBody::kEnvelopeWithId}) {
    if (text == RunBodyName(b)) return b;
  }
  return InvalidArgument("the /run body form must be raw, envelope or envelope-with-id (got '" +
                         std::string(text.substr(0, 40)) + "')");
}

namespace {

// A whole number in [min, max] at `key`, when present (JsonFields checks the range before any
// conversion).
template <typename T>
Status ReadInt(const json& config, const char* key, int64_t min, int64_t max, T& out) {
  if (!config.contains(key)) return Status::Ok();
  Result<int64_t> v = JsonFields(config, "").IntInRange(key, min, max);
  if (!v.ok()) {
    return InvalidArgument(std::string(key) + " must be a whole number from " +
                           std::to_string(min) + " to " + std::to_string(max));
  }
  out = static_cast<T>(*v);
  return Status::Ok();
}

// idleTimeScale or durationTimeScale: how many times faster than requested a timer runs.
Status ReadTimeScale(const json& config, const char* key, double& out) {
  if (!config.contains(key)) return Status::Ok();
  const json& v = config[key];
  if (!v.is_number() ||
      !(v.get<double>() >= kMinIdleTimeScale && v.get<double>() <= kMaxIdleTimeScale)) {
    return InvalidArgument(std::string(key) +
                           " must be a number from 0.001 to 1000000 (1 = real time)");
  }
  out = v.get<double>();
  return Status::Ok();
}

// rateLimits: operation name -> {perSecond, burst}.
Status ReadRateLimits(const json& limits, std::map<std::string, RateLimit>& out) {
  if (!limits.is_object()) return InvalidArgument("rateLimits must map operation names");
  for (const auto& [op, v] : limits.items()) {
    // perSecond 0 is no limit; below 0.001 is a mistake, and near 0 the wait would overflow.
    auto in = [](const json& n, double min, double max) {
      return n.is_number() && n.get<double>() >= min && n.get<double>() <= max;
    };
    const json per_second = v.is_object() ? v.value("perSecond", json(0)) : json();
    const json burst = v.is_object() ? v.value("burst", per_second) : json();
    if (!(in(per_second, 0.001, 1e6) || (per_second.is_number() && per_second == 0)) ||
        !in(burst, 0, 1e6)) {
      return InvalidArgument("rateLimits." + op +
                             " must be {\"perSecond\": N, \"burst\": N}, perSecond 0 (no "
                             "limit) or from 0.001 to 1000000, burst from 0 to 1000000");
    }
    RateLimit limit;
    limit.per_second = per_second.get<double>();
    limit.burst = burst.get<double>();
    out[op] = limit;
  }
  return Status::Ok();
}

// latency: the distribution of each operation's time to take effect.
Status ReadLatencies(const json& l, TransitionLatencies& out) {
  if (!l.is_object()) return InvalidArgument("latency must be an object");
  const std::pair<const char*, LatencyDistribution*> fields[] = {{"run", &out.run},
                                                                 {"suspend", &out.suspend},
                                                                 {"resume", &out.resume},
                                                                 {"terminate", &out.terminate},
                                                                 {"build", &out.build}};
  for (const auto& [name, target] : fields) {
    if (!l.contains(name)) continue;
    MVR_ASSIGN_OR_RETURN(*target,
                         LatencyDistribution::FromJson(l[name], std::string("latency.") + name));
  }
  return Status::Ok();
}

}  // namespace

// The sizes, durations and failure rates.
Status MicrovmModelOptions::ApplyQuantities(const json& config) {
  constexpr int64_t kMaxMiB = 1LL << 30;  // a petabyte of memory
  MVR_RETURN_IF_ERROR(ReadInt(config, "defaultMemoryMiB", 1, kMaxMiB, default_memory_mib));
  MVR_RETURN_IF_ERROR(ReadInt(config, "memoryQuotaMiB", 0, kMaxMiB, memory_quota_mib));
  MVR_RETURN_IF_ERROR(
      ReadInt(config, "defaultMaximumDurationInSeconds", 1, 28800, default_max_duration_seconds));
  int64_t retention_s = terminated_retention.count() / 1000;
  MVR_RETURN_IF_ERROR(
      ReadInt(config, "terminatedRetentionSeconds", 0, 30LL * 24 * 3600, retention_s));
  terminated_retention = Duration(retention_s * 1000);
  MVR_RETURN_IF_ERROR(ReadProbability(config, "bootFailureProbability", boot_failure_probability));
  MVR_RETURN_IF_ERROR(ReadInt(config, "hangLaunches", 0, 1'000'000, hang_launches));
  if (config.contains("bootFailuresByImage")) {
    MVR_ASSIGN_OR_RETURN(boot_failures_by_image,
                         ParseBootFailuresByImage(config["bootFailuresByImage"]));
  }
  if (config.contains("ingressAnswerDelayMs")) {
    MVR_ASSIGN_OR_RETURN(ingress_answer_delays,
                         ParseIngressAnswerDelays(config["ingressAnswerDelayMs"]));
  }
  MVR_RETURN_IF_ERROR(ReadProbability(config, "serverErrorProbability", server_error_probability));
  MVR_RETURN_IF_ERROR(ReadProbability(config, "throttleProbability", throttle_probability));
  MVR_RETURN_IF_ERROR(ReadTimeScale(config, "idleTimeScale", idle_time_scale));
  MVR_RETURN_IF_ERROR(ReadTimeScale(config, "durationTimeScale", duration_time_scale));
  if (config.contains("runningBeforeHookMs")) {
    int64_t ms = 0;
    MVR_RETURN_IF_ERROR(ReadInt(config, "runningBeforeHookMs", 0, kMaxLatencyMs, ms));
    running_before_hook = Duration(ms);
  }
  return Status::Ok();
}

Status MicrovmModelOptions::ApplyJson(const json& config) {
  MVR_RETURN_IF_ERROR(CheckConfigStrings(config, "config"));
  if (!config.is_object()) return InvalidArgument("the emulator config must be a JSON object");
  if (config.contains("region")) {
    if (!config["region"].is_string()) return InvalidArgument("region must be a string");
    region = config["region"].get<std::string>();
  }
  MVR_RETURN_IF_ERROR(ApplyQuantities(config));
  if (config.contains("programExit")) {
    const json& v = config["programExit"];
    if (!v.is_string() || (v != "terminate" && v != "keep")) {
      return InvalidArgument(
          "programExit must be \"terminate\" (a VM whose program exits ends) or \"keep\" (it "
          "runs on until terminated or its maximum duration)");
    }
    program_exit_terminates = v == "terminate";
  }
  for (auto [key, flag] : {std::pair{"requireImageArn", &require_image_arn},
                           std::pair{"requireIngressConnector", &require_ingress_connector}}) {
    if (!config.contains(key)) continue;
    if (!config[key].is_boolean())
      return InvalidArgument(std::string(key) + " must be true or false");
    *flag = config[key].get<bool>();
  }
  if (config.contains("rateLimits")) {
    MVR_RETURN_IF_ERROR(ReadRateLimits(config["rateLimits"], rate_limits));
  }
  if (config.contains("latency")) MVR_RETURN_IF_ERROR(ReadLatencies(config["latency"], latency));
  return Status::Ok();
}

}  // namespace mvr::emulate::microvms
