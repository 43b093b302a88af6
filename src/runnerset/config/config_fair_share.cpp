// launcher.fairShare (config.h, FairShareSettings): {"enabled": true, "repositories":
// {"owner/name": {"weight": 2, "max": 10}}}. Every error names the key and what it takes.
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
  if (!j.is_object()) return Refuse(key, "expected an object with weight and/or max");
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
    } else {
      return Refuse(key + "." + member, "unknown key; a repository takes weight and max");
    }
  }
  return Status::Ok();
}

}  // namespace

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
