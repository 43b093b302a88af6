// Internal to runnerset/config: the reader of one object of the runner set's config file (Strict),
// and the parsers of sections kept in files of their own. Strict reads members through JsonFields,
// so errors read as everywhere else ("github.installationId: expected a whole number from 1 to ...,
// got a string"), every string one line of at most 4 KB, and any member not asked about refused.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "base/json_fields.h"
#include "base/status.h"
#include "runnerset/config/config.h"

namespace mvr::runnerset::config_internal {

using nlohmann::json;

inline constexpr size_t kMaxSettingBytes = 4096;

// A missing or null member leaves `out` as it was.
class Strict {
 public:
  Strict(const json& object, std::string path) : fields_(object, std::move(path)) {}

  std::string Key(const std::string& name) const { return fields_.MemberPath(name.c_str()); }
  const json* Find(const std::string& name) {
    seen_.insert(name);
    return fields_.Has(name.c_str()) ? &object()[name] : nullptr;
  }
  Status String(const std::string& name, std::string& out, bool required = false) {
    if (!Find(name)) return required ? InvalidArgument(Key(name) + ": required") : Status::Ok();
    MVR_ASSIGN_OR_RETURN(out, fields_.String(name.c_str()));
    if (required && out.empty()) return InvalidArgument(Key(name) + ": must not be empty");
    return OneLine(Key(name), out);
  }
  // A path (one line), or PEM text (lines of base64 between "-----BEGIN" and "-----END" lines;
  // at most 4096 bytes, as Lambda's environment holds 4 KB).
  Status PathOrPem(const std::string& name, std::string& out) {
    if (!Find(name)) return Status::Ok();
    MVR_ASSIGN_OR_RETURN(out, fields_.String(name.c_str()));
    if (out.rfind("-----BEGIN", 0) != 0) return OneLine(Key(name), out);
    if (out.size() > kMaxSettingBytes) return OneLine(Key(name), out);  // names the limit
    if (out.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                              "+/=- \r\n") != std::string::npos) {
      return InvalidArgument(Key(name) + ": PEM text holds characters PEM does not have");
    }
    return Status::Ok();
  }
  // An array of non-empty one-line strings.
  Status Strings(const std::string& name, std::vector<std::string>& out) {
    const json* v = Find(name);
    if (!v) return Status::Ok();
    if (!v->is_array()) return InvalidArgument(Key(name) + ": expected an array of strings");
    out.clear();
    for (size_t i = 0; i < v->size(); ++i) {
      const std::string at = Key(name) + "[" + std::to_string(i) + "]";
      const json& e = (*v)[i];
      if (!e.is_string() || e.get<std::string>().empty()) {
        return InvalidArgument(at + ": expected a non-empty string");
      }
      MVR_RETURN_IF_ERROR(OneLine(at, e.get<std::string>()));
      out.push_back(e.get<std::string>());
    }
    return Status::Ok();
  }
  template <typename Int>
  Status Integer(const std::string& name, Int& out, int64_t min, int64_t max) {
    if (!Find(name)) return Status::Ok();
    MVR_ASSIGN_OR_RETURN(int64_t n, fields_.IntInRange(name.c_str(), min, max));
    out = static_cast<Int>(n);
    return Status::Ok();
  }
  Status Number(const std::string& name, double& out, double min, double max) {
    if (!Find(name)) return Status::Ok();
    MVR_ASSIGN_OR_RETURN(out, fields_.NumberInRange(name.c_str(), min, max));
    return Status::Ok();
  }
  // Call last: every member not read is an unknown key.
  Status NoOthers() const { return fields_.OnlyKeys(seen_, " (see docs/runner-set-config.md)"); }

 private:
  // Every string of this file is one line: a name, label, path, URL or ARN.
  static Status OneLine(const std::string& key, const std::string& value) {
    if (value.size() > kMaxSettingBytes) {
      return InvalidArgument(key + ": " + std::to_string(value.size()) +
                             " bytes, over the limit of " + std::to_string(kMaxSettingBytes));
    }
    if (value.find_first_of("\t\n\r") != std::string::npos) {
      return InvalidArgument(key + ": must be one line, without tabs or line breaks");
    }
    return Status::Ok();
  }
  const json& object() const { return fields_.object(); }

  JsonFields fields_;
  std::set<std::string> seen_;
};

// InvalidArgument unless `v` is an object.
inline Status ObjectAt(const json* v, const std::string& key) {
  if (!v->is_object()) return InvalidArgument(key + ": expected an object");
  return Status::Ok();
}

// The `github` member (config_github.cpp).
Status ParseGitHubSettings(const json& j, GitHubSettings& g);

}  // namespace mvr::runnerset::config_internal
