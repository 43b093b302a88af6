// `mvr doctor`: checks a runner set's configuration and everything it depends on, in order - the
// configuration and its secret files; GitHub's credentials and the permissions the set needs;
// the webhook (where it points, its content type, its recent deliveries); each class's image
// version (exists, built, active, its runner's version); the store and the queue (reachable,
// schema, dead letters); the AWS identity and whether each call the set makes is allowed. Each
// check passes, fails (with what to do), or is not checked (with why: an earlier check failed, or
// nothing can tell without acting). Read-only: nothing is created, changed or deleted, except that
// a fine-grained token's write permission is shown by asking GitHub for a runner registration
// token (valid one hour, never used); `--canary` is the exception asked for: one real job end to
// end, which cleans up after itself (doctor_canary.h). No secret reaches the report.
// Thread-safety: a DoctorReport is a plain value; the checks run on one thread.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "aws/microvms/microvms.h"
#include "aws/services/aws_identity.h"
#include "aws/services/dynamodb.h"
#include "aws/services/sqs.h"
#include "base/clock.h"
#include "base/seam.h"
#include "github/github_client.h"
#include "github/scaleset_client.h"
#include "runnerset/config/config.h"
#include "store/store.h"

namespace mvr::runnerset {

enum class CheckOutcome { kPass, kFail, kNotChecked };
const char* CheckOutcomeName(CheckOutcome outcome);  // "PASS", "FAIL", "NOT CHECKED"

struct CheckResult {
  std::string name;  // "github credentials", "image mvr-small" ...
  CheckOutcome outcome = CheckOutcome::kPass;
  std::string detail;  // what was found, or why it was not checked
  std::string fix;     // for a failure: what to do
};

// Exit codes of `mvr doctor`.
inline constexpr int kDoctorAllPassed = 0;
inline constexpr int kDoctorFailed = 1;     // at least one check failed
inline constexpr int kDoctorUnchecked = 3;  // none failed, but some could not be checked

class DoctorReport {
 public:
  void Pass(std::string name, std::string detail);
  void Fail(std::string name, std::string detail, std::string fix);
  void NotChecked(std::string name, std::string why);
  void Append(const DoctorReport& other);
  const std::vector<CheckResult>& checks() const { return checks_; }
  // Whether the last check named `name` passed.
  bool Passed(const std::string& name) const;
  int ExitCode() const;
  // One line per check ("PASS  name: detail"), a "fix:" line under each failure, and a summary.
  std::string Text() const;
  // {"checks": [{"name", "outcome", "detail", "fix"}], "exitCode"}.
  nlohmann::json Json() const;

 private:
  std::vector<CheckResult> checks_;
};

// The clients the checks use; null where the configuration does not call for one or it could not
// be built (the checks that need it are then not checked, saying why).
struct DoctorClients {
  Seam seam;
  std::string region;  // the set's AWS region (for the ARNs of the calls simulated)
  github::GitHubClient* github = nullptr;  // the first (or only) GitHub App's, or the PAT's
  // The other Apps of github.apps, in order: each is checked to be accepted for the scope (its
  // permissions are the first App's to check: the Apps are installed alike).
  std::vector<github::GitHubClient*> other_apps = {};
  aws::MicrovmService* microvms = nullptr;
  store::Store* store = nullptr;  // opened only once the store check passed
  aws::DynamoDbClient* dynamodb = nullptr;
  aws::SqsClient* sqs = nullptr;
  aws::QueryProtocolClient* sts = nullptr;
  aws::QueryProtocolClient* iam = nullptr;
  // The runner scale-set API (github.source scaleset or both).
  github::ScaleSetClient* scale_sets = nullptr;
};

// GitHub: credentials, permissions, webhook settings and deliveries (doctor_github.cpp); with a
// source that uses scale sets, the scale sets and their sessions too (or, with `scaleset`,
// instead of the webhook).
void CheckGitHub(const ServeConfig& config, DoctorClients& clients, DoctorReport& report);
// Each class's scale set (there, or creatable) and its session (opens, or another listener holds
// it): doctor_scaleset.cpp. `sets` null: not checked.
void CheckScaleSets(const ServeConfig& config, github::ScaleSetClient* sets, DoctorReport& report);
// The store and the queue: reachable, schema, dead letters (doctor_state.cpp). Run before
// CheckImages, which reads the runners' versions from the store.
void CheckStoreAndQueue(const ServeConfig& config, DoctorClients& clients, DoctorReport& report);
// Each class's image version and its runner (doctor_images.cpp).
void CheckImages(const ServeConfig& config, DoctorClients& clients, DoctorReport& report);
// The AWS identity, the read calls made, the mutating calls simulated (doctor_aws.cpp).
void CheckAws(const ServeConfig& config, DoctorClients& clients, DoctorReport& report);

// The webhook URL the set expects GitHub to deliver to: github.webhookUrl, else
// http://LISTEN/webhook ("" for the host when `listen` is a wildcard address).
std::string ExpectedWebhookUrl(const ServeConfig& config);

}  // namespace mvr::runnerset
