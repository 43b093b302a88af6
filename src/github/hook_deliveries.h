// What GitHub keeps of its webhook deliveries (the hook deliveries API) and which hook to ask. A
// receiver that was down reads this record afterwards: GitHub never redelivers by itself. Also
// what `mvr doctor` reads beside them: the hook's settings, the App's installation and a token's
// scopes.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"

namespace mvr::github {

// The webhook whose deliveries to read: the App's own (authenticated with the App's JWT), or a
// repository's or an organisation's hook by id (a token with "Webhooks: read").
struct HookRef {
  enum class Kind { kApp, kRepository, kOrganization };
  Kind kind = Kind::kApp;
  std::string owner;  // the organisation, or the repository's owner
  std::string repo;   // the repository's name (kRepository)
  int64_t id = 0;     // the hook's id (not for kApp)
};

// Where and how a hook delivers (a hook's "config", and for a repository's or organisation's hook
// whether it is active and which events it sends; the App's hook config has neither).
struct HookConfig {
  std::string url;
  std::string content_type;  // "json" or "form"
  std::string insecure_ssl;  // "0": TLS verified
  std::optional<bool> active;
  std::optional<std::vector<std::string>> events;
};

// The App's installation as GitHub shows it to the App: its permissions ("administration" →
// "write" ...) and whether it is suspended.
struct InstallationInfo {
  int64_t id = 0;
  std::string account;
  std::map<std::string, std::string> permissions;
  bool suspended = false;
};

// What GitHub said of the credential: a classic token's OAuth scopes (X-OAuth-Scopes).
struct CredentialProbe {
  std::optional<std::vector<std::string>> oauth_scopes;
};

// One delivery, as a listing shows it ("Simple webhook delivery").
struct HookDelivery {
  int64_t id = 0;
  std::string guid;
  std::optional<TimePoint> delivered_at;
  int status_code = 0;  // 0: the receiver could not be reached or never answered
  std::string event;
  std::string action;
  std::optional<int64_t> repository_id;
  bool redelivery = false;
  // GitHub counts 200-399 as success; anything else (0 included) means the receiver did not
  // take the delivery.
  bool failed() const { return status_code < 200 || status_code >= 400; }
};

}  // namespace mvr::github
