// launcher.fairShare (config.h, FairShareSettings): {"enabled": true, "repositories":
// {"owner/name": {"weight": 2, "max": 10, "runnerGroupId": 7}}}. Every error names the key and
// what it takes.
#include <cctype>

#include <nlohmann/json.hpp>

#include "runnerset/config/config.h"

namespace mvr::runnerset {
namespace {

using nlohmann::json;

Status Refuse(const std::string& key, const std::string& what) {
  return InvalidArgument("launcher.fairShare" + key + ": " + what);
}

Status ParseRepository(const std::string& name, const json& j, FairShareRepository& out) {
  const std::string key = ".repositories[\"" + name + "\"]";
  if (name.find('/') == std::string::npos || name.front() == '/' || name.back() == '/') {
    return Refuse(key, "name a repository as owner/name");
  }
  if (!j.is_object()) {
    return Refuse(key, "expected an object with weight, max and/or runnerGroupId");
  }
  for (const auto& [member, value] : j.items()) {
    if (member == "weight") {
      if (!value.is_number() || value.get<double>() < 0.01 || value.get<double>() > 1000) {
        return Refuse(key + ".weight", "expected a number from 0.01 to 1000");
      }
      out.weight = value.get<double>();
    } else if (member == "max") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > 100000) {
        return Refuse(key + ".max", "expected a whole number from 0 (no maximum) to 100000");
      }
      out.max = static_cast<int>(value.get<int64_t>());
    } else if (member == "runnerGroupId") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1) {
        return Refuse(key + ".runnerGroupId",
                      "expected the id of a runner group (a whole number from 1) whose repository "
                      "access is this repository");
      }
      out.runner_group_id = value.get<int64_t>();
    } else {
      return Refuse(key + "." + member,
                    "unknown key; a repository takes weight, max and runnerGroupId");
    }
  }
  return Status::Ok();
}

bool SameRepository(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

int64_t FairShareSettings::RunnerGroupOf(const std::string& repository, int64_t fallback) const {
  for (const auto& [name, r] : repositories) {
    if (r.runner_group_id > 0 && SameRepository(name, repository)) return r.runner_group_id;
  }
  return fallback;
}

Status ParseFairShare(const json& j, FairShareSettings& out) {
  if (j.is_null()) return Status::Ok();
  if (!j.is_object()) return Refuse("", "expected an object with enabled and/or repositories");
  for (const auto& [member, value] : j.items()) {
    if (member == "enabled") {
      if (!value.is_boolean()) return Refuse(".enabled", "expected true or false");
      out.enabled = value.get<bool>();
    } else if (member == "repositories") {
      if (!value.is_object()) {
        return Refuse(".repositories", "expected an object keyed by owner/name");
      }
      for (const auto& [name, repo] : value.items()) {
        FairShareRepository r;
        MVR_RETURN_IF_ERROR(ParseRepository(name, repo, r));
        out.repositories[name] = r;
      }
    } else {
      return Refuse("." + member, "unknown key; fairShare takes enabled and repositories");
    }
  }
  return Status::Ok();
}

}  // namespace mvr::runnerset
