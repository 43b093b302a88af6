// `mvr doctor`: the AWS identity (STS GetCallerIdentity), the read calls the set makes (made), and
// the mutating calls (iam:SimulatePrincipalPolicy: the Lambda MicroVMs API has no dry-run forms,
// and running, suspending or terminating a VM to see is not a check).
#include <set>

#include "runnerset/doctor/doctor.h"

namespace mvr::runnerset {
namespace {

struct DoctorAction {
  std::string action;
  std::string resource;
};

std::string DoctorImageArn(const std::string& image, const std::string& region,
                           const std::string& account) {
  if (image.rfind("arn:", 0) == 0) return image;
  return "arn:aws:lambda:" + region + ":" + account + ":microvm-image:" + image;
}

// Every mutating call the set's configuration makes (and the store's and queue's reads, which
// the doctor does not make: a receive would hide the set's messages).
std::vector<DoctorAction> DoctorMutatingCalls(const ServeConfig& config, const std::string& region,
                                              const std::string& account) {
  const std::string vms = "arn:aws:lambda:" + region + ":" + account + ":microvm:*";
  std::vector<DoctorAction> out;
  std::set<std::string> images;
  for (const RunnerClass& cls : config.classes) images.insert(cls.image);
  for (const std::string& image : images) {
    out.push_back({"lambda:RunMicrovm", DoctorImageArn(image, region, account)});
    if (config.janitor.prune_image_versions) {
      out.push_back({"lambda:DeleteMicrovmImageVersion", DoctorImageArn(image, region, account)});
    }
  }
  std::vector<std::string> vm_actions = {"lambda:RunMicrovm", "lambda:TerminateMicrovm",
                                         "lambda:CreateMicrovmAuthToken"};
  if (config.any_pool()) {
    vm_actions.push_back("lambda:SuspendMicrovm");
    vm_actions.push_back("lambda:ResumeMicrovm");
  }
  for (const std::string& a : vm_actions) out.push_back({a, vms});
  if (!config.launcher.execution_role_arn.empty()) {
    out.push_back({"iam:PassRole", config.launcher.execution_role_arn});
  }
  if (config.store.rfind("dynamodb:", 0) == 0) {
    const std::string table =
        "arn:aws:dynamodb:" + region + ":" + account + ":table/" + config.store.substr(9);
    for (const char* a : {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem",
                          "dynamodb:UpdateItem", "dynamodb:DeleteItem"}) {
      out.push_back({a, table});
    }
  }
  if (config.queue.uri.rfind("sqs:", 0) == 0) {
    const std::string name = config.queue.uri.substr(config.queue.uri.rfind('/') + 1);
    const std::string queue = "arn:aws:sqs:" + region + ":" + account + ":" + name;
    for (const char* a : {"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage",
                          "sqs:ChangeMessageVisibility"}) {
      out.push_back({a, queue});
    }
  }
  return out;
}

void DoctorReadCalls(const ServeConfig& config, DoctorClients& clients, DoctorReport& report) {
  if (clients.microvms == nullptr) {
    report.NotChecked("aws read calls", "no MicroVMs client");
    return;
  }
  std::set<std::string> images;
  for (const RunnerClass& cls : config.classes) images.insert(cls.RunImage());
  for (const std::string& image : images) {
    aws::ListMicrovmsRequest req;
    req.image_identifier = image;
    req.max_results = 1;
    if (Result<aws::ListMicrovmsResponse> r = clients.microvms->ListMicrovms(req); !r.ok()) {
      report.Fail("aws read calls", "lambda:ListMicrovms of " + image + ": " + r.status().message(),
                  r.status().code() == Code::kUnauthorized
                      ? "allow lambda:ListMicrovms (deploy/iam/runner-set-*.json)"
                      : "check the MicroVMs endpoint and region");
      return;
    }
  }
  report.Pass("aws read calls",
              "lambda:ListMicrovms of each class's image answered (the image "
              "and store reads above were made too)");
}

void DoctorSimulate(const ServeConfig& config, DoctorClients& clients,
                    const aws::CallerIdentity& who, DoctorReport& report) {
  const char* name = "aws mutating calls";
  if (clients.iam == nullptr) return report.NotChecked(name, "no IAM client");
  Result<std::string> principal = aws::PolicySourceArn(who.arn);
  if (!principal.ok()) return report.NotChecked(name, principal.status().message());
  std::string denied;
  int asked = 0;
  for (const DoctorAction& call : DoctorMutatingCalls(config, clients.region, who.account)) {
    Result<std::vector<aws::SimulatedDecision>> r =
        aws::SimulatePrincipalPolicy(*clients.iam, *principal, {call.action}, call.resource);
    if (!r.ok()) {
      return report.NotChecked(
          name, "IAM's policy simulator did not answer (" + r.status().message() +
                    "); the set's mutating calls (RunMicrovm, TerminateMicrovm ...) have no "
                    "dry-run form, so they were not tried");
    }
    for (const aws::SimulatedDecision& d : *r) {
      ++asked;
      if (!d.allowed()) denied += (denied.empty() ? "" : ", ") + d.action + " on " + d.resource;
    }
  }
  if (denied.empty()) {
    report.Pass(name, std::to_string(asked) + " calls allowed for " + *principal +
                          " (iam:SimulatePrincipalPolicy)");
  } else {
    report.Fail(name, "denied for " + *principal + ": " + denied,
                "allow them in the principal's policy (deploy/iam/runner-set-*.json, docs/iam.md)");
  }
}

}  // namespace

void CheckAws(const ServeConfig& config, DoctorClients& clients, DoctorReport& report) {
  if (clients.sts == nullptr) {
    report.NotChecked("aws identity", "no STS client (the AWS settings failed)");
  }
  Result<aws::CallerIdentity> who = clients.sts
                                        ? aws::GetCallerIdentity(*clients.sts)
                                        : Result<aws::CallerIdentity>(Internal("no STS client"));
  if (clients.sts != nullptr && !who.ok()) {
    report.Fail("aws identity", who.status().message(),
                "give mvr AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
                "or an instance role) and check AWS_REGION and AWS_ENDPOINT_URL_STS");
  } else if (who.ok()) {
    report.Pass("aws identity", who->arn + " (account " + who->account + ")");
  }
  DoctorReadCalls(config, clients, report);
  if (!who.ok()) {
    report.NotChecked("aws mutating calls", "no AWS identity to simulate the calls for");
    return;
  }
  DoctorSimulate(config, clients, *who, report);
}

}  // namespace mvr::runnerset
